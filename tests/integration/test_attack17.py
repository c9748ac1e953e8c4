"""Attack pass 17 (27 Nov): the sandboxed program against invariants 1-4 and 7
(docs/security.md). What held is listed in the report of that pass; each
hole found has a test here."""
import socket

import pytest

PY = "/usr/bin/python3"

# socket(AF_VSOCK) inside, as a hostile program would open it to reach the
# hypervisor (CID 2) or to listen for it: vsock is not namespaced, so a new
# network namespace does not stop it.
VSOCK = ("import socket\n"
         "try:\n"
         "    s = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM); print('OPENED')\n"
         "    s.bind((socket.VMADDR_CID_ANY, 45917)); s.listen(); print('LISTENING')\n"
         "except OSError as e: print('refused', e.errno)")


def vsock_on_this_kernel():
    try:
        socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM).close()
        return True
    except (OSError, AttributeError):
        return False


@pytest.mark.parametrize("network", ["loopback", "none", "host"])
def test_no_vsock_socket_inside_in_any_network_mode(lo, network):
    # Found by attack17: AF_VSOCK is not per network namespace, so under
    # --network loopback (the default) or none the command could still open
    # a vsock socket and talk to the hypervisor's services or listen for them
    # (on a Firecracker, QEMU or cloud VM: CID 2 is the host). The filter now
    # refuses the family as a kernel without it does (EAFNOSUPPORT, 97).
    r = lo("run", "--target", lo.target, "--on-exit", "discard", "--network", network, "--", PY, "-c", VSOCK)
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"refused 97\n", (r.stdout, r.stderr)
    # The control (the filter, not the kernel, refuses it): where the kernel
    # has vsock, the same user opens one outside (this test's process); on a
    # kernel without it both are refused alike.
    if not vsock_on_this_kernel():
        pytest.skip("no AF_VSOCK on this kernel: refused outside too, nothing to compare")
