"""Deterministic random-frame test of both IPC frame readers (issue 21: there
is no atheris here): the REPL server's Channel (inside the sandbox) and the
host's ReplClient.recv. Every input either gives a well-formed frame, a
clean end, or the reader's own error; never another exception, a hang or a
read past the frame's declared size."""
import importlib.util
import random
import tempfile
import threading
from pathlib import Path



from layover import _client
from layover.errors import SandboxError

SEED = 21
N = 1500


def _load_repl_io():
    path = Path(_client.__file__).with_name("_repl_io.py")
    spec = importlib.util.spec_from_file_location("_repl_io_under_test", str(path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _frame(header, payload=b"", hlen=None, plen=None):
    hlen = len(header) if hlen is None else hlen
    plen = len(payload) if plen is None else plen
    return hlen.to_bytes(4, "big") + plen.to_bytes(4, "big") + header + payload


def _random_input(rng):
    """One hostile byte string: valid frames, lies in the lengths, bad JSON,
    bad UTF-8, deep nesting, random bytes, truncation."""
    kind = rng.randrange(10)
    header = rng.choice([b'{"t":"run","id":1}', b'{"t":"out","id":1,"s":"stdout"}', b'{"t":1}', b'[]', b'{}',
                         b'{"t":"x"', b'\xff\xfe{"t":"run"}', b'{"t":"run","id":1e999}', b'NaN',
                         b'{"t":"run","id":' + b"9" * 5000 + b"}", b'{"t": "\\ud800"}'])
    payload = bytes(rng.randrange(256) for _ in range(rng.randrange(64)))
    if kind == 0:
        return _frame(header, payload)
    if kind == 1:
        return _frame(header, payload, hlen=rng.choice([0, 65537, 2**32 - 1, len(header) + 3]))
    if kind == 2:
        return _frame(header, payload, plen=rng.choice([2**20 + 1, 2**32 - 1, len(payload) + 5]))
    if kind == 3:
        depth = rng.choice([100, 5000, 60000])
        return _frame(b"[" * depth + b"]" * depth)
    if kind == 4:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(40)))
    if kind == 5:
        f = _frame(header, payload)
        return f[:rng.randrange(len(f))]
    if kind == 6:
        return b"".join(_frame(header, payload) for _ in range(rng.randrange(1, 5)))
    if kind == 7:
        h = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 30)))
        return _frame(h, payload)
    if kind == 8:
        return _frame(b'{"t":"run","id":' + str(rng.randrange(-5, 2**70)).encode() + b"}", payload)
    return _frame(b'{"t":"' + bytes(rng.randrange(32, 127) for _ in range(8)) + b'"}' + b" " * rng.randrange(3),
                  payload)


def _inputs():
    rng = random.Random(SEED)
    return [_random_input(rng) for _ in range(N)]


def test_the_repl_servers_frame_reader_survives_random_frames():
    repl_io = _load_repl_io()
    outcomes = set()
    for data in _inputs():
        with tempfile.TemporaryFile() as f:  # a pipe's buffer would block the write
            f.write(data)
            f.flush()
            f.seek(0)
            chan = repl_io.Channel(f.fileno(), -1)
            while True:
                try:
                    frame = chan.recv()
                except ValueError:  # the server's protocol error (a clean exit 70)
                    outcomes.add("error")
                    break
                if frame is None:
                    outcomes.add("eof")
                    break
                header, payload = frame
                assert isinstance(header, dict) and isinstance(header["t"], str)
                assert isinstance(payload, bytes) and len(payload) <= repl_io.MAX_PAYLOAD
                outcomes.add("frame")
    assert outcomes == {"error", "eof", "frame"}


def test_the_hosts_frame_reader_survives_random_frames():
    outcomes = set()
    for data in _inputs():
        host, peer = _client.socketpair()
        client = _client.ReplClient(host, None, lambda: "layover: the test's helper has exited",
                                    lambda reason: None)
        try:
            def send():
                try:
                    peer.sendall(data)
                except OSError:  # the client stopped reading at a bad frame
                    pass
                peer.close()

            t = threading.Thread(target=send)
            t.start()
            while True:
                try:
                    header, payload = client.recv(None)
                except SandboxError:
                    outcomes.add("error")
                    break
                assert isinstance(header, dict) and isinstance(header["t"], str)
                assert len(payload) <= _client.MAX_PAYLOAD
                outcomes.add("frame")
            t.join()
        finally:
            client.close()
            peer.close()
    assert outcomes == {"error", "frame"}
