"""attack29: a hostile patch against the review of a file that moved on the
target (leftovers3: diff reads such a file whole when the patch carries its
original, so it shows the merge apply writes)."""
import json
import tarfile

from patch_builder import PatchBuilder, compress, fingerprint, tar_bytes, with_sums

MIB = 1 << 20


def text(tag, size, at=None, line=b""):
    out = b"".join(line if i == at else b"%s%08d\n" % (tag, i) for i in range(size // 10 + 1))
    return out[:size]


def patch_over(target, out, files, original):
    """A patch modifying each of `files` (name -> new bytes) whose base names
    `original` (2 bytes; with it carried when `original` is given)."""
    tiny = b"x\n"
    pb = PatchBuilder(target)
    pb.manifest["format"] = "layover-patch/2"
    base = {"type": "file", "size": len(tiny), "mode": 0o644, "fingerprint": fingerprint(tiny), "stale": False}
    for name, new in files.items():
        pb.file(name, new, base=dict(base), kind="modified")
    members = pb.members
    if original:
        pb.manifest["originals"] = [{"fingerprint": fingerprint(tiny), "size": len(tiny)}]
        members = members + [(tarfile.TarInfo(".layover/originals"), tiny)]
    head = [(tarfile.TarInfo(".layover/manifest.json"), json.dumps(pb.manifest).encode())]
    return compress(tar_bytes(with_sums(head + members)), out)


def test_a_big_file_whose_original_does_not_merge_is_shown_by_its_window(lo, tmp_path):
    # Two real files over 8 MiB (the reviewer's logs, data); the patch's base
    # for each names a 2-byte original it carries, so diff held both whole on
    # both sides, found the merge overlapping (apply reports a conflict), and
    # diffed them whole: a 63 MiB pair took 924 MB, 5 s of CPU and printed
    # 132 MB, where the same patch without the original printed one line
    # ('differ') in 17 MB. A merge that does not happen now leaves the file to
    # the window rule, as a file without an original is.
    size = 9 * MIB
    real = text(b"r", size)
    files = {"wide.log": text(b"n", size), "narrow.log": text(b"r", size, at=400000, line=b"agent!!!\n")}
    for name in files:
        (lo.target / name).write_bytes(real)
        (lo.target / name).chmod(0o644)
    hostile = patch_over(lo.target, tmp_path / "hostile.tar.zst", files, original=True)
    plain = patch_over(lo.target, tmp_path / "plain.tar.zst", files, original=False)
    shown = lo("diff", hostile, "--target", lo.target)
    want = lo("diff", plain, "--target", lo.target)
    assert shown.returncode == want.returncode and b"invalid patch" not in shown.stderr, shown.stderr
    assert b"apply will report a conflict" in shown.stderr, shown.stderr
    assert len(shown.stdout) < 4096 and b"+agent!!!" in shown.stdout, shown.stdout[:2000]
    assert shown.stdout == want.stdout
    for name in files:  # the real files untouched
        assert (lo.target / name).read_bytes() == real
