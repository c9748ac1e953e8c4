"""The lead's own tests of stop 46."""
import os
import threading

RENAMES_THROUGH_DOTDOT = (
    "cd '%s' && python3 -c 'import os\n"
    "os.makedirs(\"a/b\")\n"
    "d = os.open(\"a/b\", os.O_PATH | os.O_DIRECTORY)\n"
    "bad = 0\n"
    "for i in range(%d):\n"
    "    open(\"f\", \"w\").close()\n"
    "    try:\n"
    "        os.rename(\"f\", \"../../g\", dst_dir_fd=d)\n"
    "    except OSError as e:\n"
    "        bad += 1\n"
    "        err = e\n"
    "print(\"failed\", bad, err if bad else \"\")\n'")


def test_renames_through_dotdot_from_a_dirfd_survive_renames_elsewhere_on_the_machine(lo, tmp_path):
    # A kept session's rename is resolved by the supervisor (openat2 with
    # RESOLVE_BENEATH, then RESOLVE_IN_ROOT, to note what it replaces). The
    # kernel answers EAGAIN to a scoped lookup through ".." whenever any
    # rename or mount happened on the machine meanwhile ("the caller may
    # retry"); that EAGAIN became EXDEV, so a loaded CI's `make test` saw a
    # plain rename fail (test_attack16's dotdot test, once). The host renames
    # without pause here while the sandbox renames 3,000 times.
    (lo.target / "seed.txt").write_text("seed\n")
    stop = threading.Event()
    churn = tmp_path / "churn"
    churn.mkdir()

    def rename_elsewhere():
        a, b = churn / "x", churn / "y"
        a.write_text("")
        while not stop.is_set():
            os.rename(a, b)
            os.rename(b, a)

    t = threading.Thread(target=rename_elsewhere)
    t.start()
    try:
        r = lo.run(RENAMES_THROUGH_DOTDOT % (lo.target, 3000), session="dotdot", timeout=300)
    finally:
        stop.set()
        t.join()
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().strip() == "failed 0", r.stdout
    assert (lo.upper("dotdot") / "g").exists()
