#!/usr/bin/env python3
"""Write the seed corpora of tests/fuzz/corpus/ (small, deterministic): hand-
built patches covering every member kind of the overlay cases (file, dir,
symlink, hardlink, fifo, whiteout, opaque dir, xattrs, sparse, deep names,
trailing padding), their manifests and sums for the JSON target, frames for
the zstd walker, glob pattern/path pairs, old/new text pairs, a patch carrying originals and the rename
worker's messages."""
import io
import json
import os
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from patch_builder import PatchBuilder, fingerprint, tar_bytes  # noqa: E402


def out(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def zst(raw, *flags):
    return subprocess.run(["zstd", "-q", "-c", "--check", *flags], input=raw, capture_output=True, check=True).stdout


def builders():
    t = "/tmp/layover-fuzz-target"
    b = PatchBuilder(t).file("docs/a.txt", b"hello\nthere\n", base={"type": "file", "size": 12, "mode": 0o644,
                                                                      "fingerprint": "0" * 32, "stale": False},
                                kind="modified")
    yield "modified", b
    b = PatchBuilder(t).dir("new").file("new/f", b"x" * 100, mode=0o755).symlink("new/l", "../docs/a.txt")
    yield "added_tree", b
    b = PatchBuilder(t).file("x", b"v\n", xattrs={b"user.a%b": b"1", b"user.k=v": b"2", b"user.sp ace": b"3"})
    yield "xattrs", b
    b = PatchBuilder(t).dir("shared", mode=0o1777).file("tool", b"#!/bin/sh\n", mode=0o6755)
    yield "modes", b
    b = PatchBuilder(t)
    b.manifest["changes"].append({"path": "old", "kind": "deleted", "type": None, "size": 0, "mode": 0,
                                  "old_type": "file", "old_mode": 420, "link_target": None, "captured": True,
                                  "mtime_ns": 0, "xattrs": []})
    b.manifest["base"].append({"path": "old", "type": "file", "size": 2, "mode": 420, "fingerprint": "0" * 32,
                               "stale": False})
    b.raw_member(tarfile.TarInfo(".wh.old"), b"")
    yield "whiteout", b
    b = PatchBuilder(t)
    b.dir("op")
    b.manifest["changes"][-1]["kind"] = "opaque_dir"
    b.raw_member(tarfile.TarInfo("op/.wh..wh..opq"), b"")
    yield "opaque", b
    b = PatchBuilder(t).file("f", b"data\n")
    hl = tarfile.TarInfo("g")
    hl.type, hl.linkname = tarfile.LNKTYPE, "f"
    b.file("g", b"data\n", member=False).raw_member(hl)
    fifo = tarfile.TarInfo("p")
    fifo.type = tarfile.FIFOTYPE
    b._change("p", "added", "fifo", 0o644)
    b.raw_member(fifo)
    yield "links_fifo", b
    parts = ["d%02d" % i + "y" * 60 for i in range(40)]
    b = PatchBuilder(t)
    for i in range(len(parts)):
        b.dir("/".join(parts[:i + 1]))
    b.file("/".join(parts) + "/leaf", b"deep\n")
    yield "deep", b
    # A session's step records (docs/patch-format.md "steps"): a live one
    # last, a squashed one, a non-UTF-8 path, a hostile label.
    b = PatchBuilder(t).file("a", b"a\n")
    b.manifest["steps"] = [
        {"step": 1, "label": "sh -c \x1b]0;title\x07x", "start": "2026-01-01T00:00:00Z",
         "end": "2026-01-01T00:00:01Z", "squashed": True, "paths": [{"path": "a", "kind": "A"}]},
        {"step": 2, "label": "rm", "start": "", "end": "", "paths": [
            {"path": "b\\xff", "path_b64": "Yv8=", "kind": "D"}, {"path": "d/e", "kind": "mode"}]},
        {"step": 3, "label": "live", "start": "", "end": "", "live": True, "paths": [{"path": "a", "kind": "M"}]}]
    yield "steps", b


def main():
    for name, b in builders():
        raw = b.tar()
        out("patch", name, zst(raw))
        out("zframe", name, zst(raw))
        out("json", name + ".manifest", json.dumps(b.manifest, indent=1).encode())
        with tarfile.open(fileobj=io.BytesIO(raw)) as tf:
            out("json", name + ".sums", tf.extractfile(".layover/sums").read())
    b = PatchBuilder("/tmp/layover-fuzz-target").file("a", b"a\n")
    out("patch", "padded", zst(b.tar() + bytes(4096)))
    out("patch", "trailing_tar", zst(b.tar() + tar_bytes([(tarfile.TarInfo("../x"), b"x")])))
    out("patch", "beneath_symlink", zst(PatchBuilder("/t").symlink("a", "/etc").file("a/x", b"x").tar()))
    out("zframe", "many_frames", zst(b.tar()) + zst(b"tail"))
    out("zframe", "level19", zst(b.tar(), "-19"))
    out("patch", "two_frames", zst(b.tar()[:1024]) + zst(b.tar()[1024:]))
    for i, (pat, path) in enumerate([("*.log", "a/b.log"), ("**/x", "x"), ("a/**/b", "a/c/d/b"), ("[!a-c]?", "dz"),
                                     ("\\*", "*"), ("**", "a/b/c"), ("a/*", "a/b/c"), ("[", "[")]):
        out("glob", "g%d" % i, pat.encode() + b"\0" + path.encode())
    for i, (old, new) in enumerate([(b"a\nb\nc\n", b"a\nB\nc\n"), (b"x", b"x\ny"), (b"", b"new\n"),
                                    (b"one\ntwo\n", b""), (b"\n" * 20 + b"z", b"\n" * 10 + b"z\n"),
                                    (b"\x1b[31mred\r\n", b"\xc2\x9bcsi\n")]):
        out("udiff", "d%d" % i, old + b"\0" + new)
    ipc_seeds()
    rejection_seeds()
    control_seeds()
    originals_seeds()


def originals_seeds():
    """layover-patch/2 carrying .layover/originals and /3 carrying a .layover/original before its file
    (capture/patch/originals reader): docs/a.txt's base is not the fuzz target's "hello\nworld\n", so
    apply --dry-run goes on to the 3-way merge from it."""
    t = "/tmp/layover-fuzz-target"
    base = b"hello\nold\nthree\nfour\nfive\nsix\nseven\n"
    b = PatchBuilder(t).raw_member(tarfile.TarInfo(".layover/original"), base).file("docs/a.txt", b"hello\nold\nthree\nfour\nfive\nsix\nSEVEN\n",
                             base={"type": "file", "size": len(base), "mode": 0o644,
                                   "fingerprint": fingerprint(base), "stale": False}, kind="modified")
    b.manifest["format"] = "layover-patch/3"
    b.manifest["originals"] = [{"fingerprint": fingerprint(base), "size": len(base)}]
    out("patch", "originals3", zst(b.tar()))
    b.manifest["format"] = "layover-patch/2"
    b.members = b.members[1:] + [(tarfile.TarInfo(".layover/originals"), base)]
    out("patch", "originals", zst(b.tar()))


def rejection_seeds():
    """SESSION/rejections.json (helper/store/records/rejections.cc): a whole-change and a hunk record."""
    recs = [{"seq": 1, "path": "proj/f", "hunk": 0, "reason": "keep the old name", "time": "2026-11-25T23:00:00Z",
             "fingerprint": "0123456789abcdef0123456789abcdef"},
            {"seq": 3, "path": "proj/\u00e9", "path_b64": "cHJvai//", "hunk": 2, "reason": "", "time": "t",
             "fingerprint": "ab", "hunk_fingerprint": "cd"}]
    out("json", "rejections", json.dumps({"format": "layover-rejections/1", "next_seq": 4, "rejections": recs},
                                         indent=1).encode())


def control_seeds():
    """SESSION/control.sock's requests and replies (helper/sandbox/ipc/control_msg.cc)."""
    for name, msg in (("checkpoint", {"op": "checkpoint", "label": "fix tests"}),
                      ("rollback", {"op": "rollback", "label": "", "step": 2}),
                      ("undo", {"op": "undo", "label": ""}),
                      ("revert", {"op": "revert", "label": "", "step": 1}),
                      ("fork", {"op": "fork", "label": "", "step": 3, "name": "best-of.2"}),
                      ("reply", {"ok": True, "step": 4, "count": 2}),
                      ("refused", {"ok": False, "error": "a process in session 'a' writes to it"})):
        out("json", "control-" + name, json.dumps(msg).encode())


def ipc_seeds():
    """rename_call's messages (helper/sandbox/rename/rename_call.cc): a request is
    u64 id, u32 flags, u8 fd bits, OLD NUL NEW; a reply is u64 id, i32 errno."""
    import struct
    for i, (flags, fds, old, new) in enumerate([(0, 0, b"/a/src", b"/a/dst"), (1, 3, b"src/", b"dst"),
                                                (2, 1, b"d\x1b[2J", b"\xff\xfe"), (4, 2, b"", b"")]):
        out("ipc", "req%d" % i, struct.pack("<QIB", 1000 + i, flags, fds) + old + b"\0" + new)
    for i, err in enumerate([0, 18, 39]):
        out("ipc", "reply%d" % i, struct.pack("<Qi", 7 + i, err))


if __name__ == "__main__":
    main()
