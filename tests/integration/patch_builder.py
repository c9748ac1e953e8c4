"""Build layover patches BY HAND (not with `layover save`), so a test can make
any manifest, member order, xattr encoding and trailing bytes: what a patch
from someone else may hold. Follows docs/patch-format.md: a pax tar (the
manifest first, .layover/sums last) compressed by `zstd --check`, the sums
being XXH3-128 fingerprints computed with the system libxxhash via ctypes.

    b = PatchBuilder("/home/ann")
    b.file("notes.txt", b"hi\\n", mode=0o644)
    b.dir("d", mode=0o1777)
    b.write(out_path, trailing=b"")
"""
import base64
import ctypes
import ctypes.util
import io
import json
import os
import struct
import subprocess
import tarfile


class _H128(ctypes.Structure):
    _fields_ = [("low64", ctypes.c_uint64), ("high64", ctypes.c_uint64)]


def _libxxhash():
    for name in ("libxxhash.so.0", ctypes.util.find_library("xxhash")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        lib.XXH3_128bits.restype = _H128
        lib.XXH3_128bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        return lib
    raise RuntimeError("libxxhash (a build dependency of layover) is not installed")


_XX = _libxxhash()


def _xxh128(b):
    h = _XX.XXH3_128bits(b, len(b))
    return h.high64.to_bytes(8, "big") + h.low64.to_bytes(8, "big")


def fingerprint(data):
    """A dense byte string's fingerprint: data || canonical(hole map) || le64(size)."""
    hole_map = struct.pack("<QQ", 0, len(data)) if data else b""
    return _xxh128(data + _xxh128(hole_map) + struct.pack("<Q", len(data))).hex()


def bytes_field(obj, key, value):
    """docs/patch-format.md's byte-string encoding: a string, plus KEY_b64 when not UTF-8."""
    if isinstance(value, str):
        value = os.fsencode(value)
    try:
        obj[key] = value.decode("utf-8")
    except UnicodeDecodeError:
        obj[key] = value.decode("utf-8", "replace")
        obj[key + "_b64"] = base64.b64encode(value).decode("ascii")


def with_sums(members):
    """members: [(TarInfo, data|None)] with the manifest first; the old
    .layover/sums (if any) is dropped and a correct one appended."""
    members = [(i, d) for i, d in members if i.name != ".layover/sums"]
    sums = []
    for info, data in members:
        if info.isfile():
            fp = fingerprint(data or b"")
        elif info.issym() or info.islnk():
            fp = fingerprint(os.fsencode(info.linkname))
        else:
            fp = fingerprint(b"")
        entry = {"fingerprint": fp}
        bytes_field(entry, "path", os.fsencode(info.name.rstrip("/")))
        sums.append(entry)
    text = json.dumps({"format": "layover-sums/1", "members": sums}).encode()
    return members + [(tarfile.TarInfo(".layover/sums"), text)]


def tar_bytes(members):
    """(TarInfo, data) pairs as a pax tar (end-of-archive blocks included)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:", format=tarfile.PAX_FORMAT, encoding="utf-8",
                      errors="surrogateescape") as tf:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
            else:
                tf.addfile(info)
    return buf.getvalue()


def compress(raw, out):
    subprocess.run(["zstd", "-q", "-f", "--check", "-o", str(out)], input=raw, check=True)
    return out


def xattr_key(name):
    """libarchive's pax xattr key: the name URL-encoded (%XX for '%', '=',
    and bytes outside 0x21..0x7e)."""
    raw = os.fsencode(name) if isinstance(name, str) else name
    return "".join(chr(c) if 33 <= c <= 126 and c not in (0x25, 0x3D) else "%%%02X" % c for c in raw)


class PatchBuilder:
    """Changes are added in order; each makes a manifest change, a base record
    and (unless member=False) its payload member."""

    def __init__(self, target, session="hand-made"):
        self.manifest = {"format": "layover-patch/1", "target": str(target), "session": session,
                         "command": ["/bin/sh"], "created": "2026-01-01T00:00:00Z", "version": "0.1.0",
                         "changes": [], "base": []}
        self.members = []

    def _change(self, path, kind, typ, mode, size=0, link=None, old=None, xattrs=None, base=None):
        c = {"kind": kind, "type": typ, "size": size, "mode": mode, "old_type": None, "old_mode": 0,
             "link_target": None, "captured": True, "mtime_ns": 1700000000 * 10**9, "xattrs": []}
        bytes_field(c, "path", path)
        if old:
            c["old_type"], c["old_mode"] = old
        if link is not None:
            bytes_field(c, "link_target", link)
        for n, v in sorted((xattrs or {}).items()):
            x = {"value_b64": base64.b64encode(v).decode()}
            bytes_field(x, "name", n)
            c["xattrs"].append(x)
        self.manifest["changes"].append(c)
        b = base or {"absent": True}
        bytes_field(b, "path", path)
        self.manifest["base"].append(b)
        return c

    def _info(self, path, typ, mode, xattrs=None, size=0):
        info = tarfile.TarInfo(os.fsdecode(path) + ("/" if typ == tarfile.DIRTYPE else ""))
        info.type, info.mode, info.mtime = typ, mode, 1700000000
        for n, v in (xattrs or {}).items():
            # Both records, as libarchive writes them (docs/patch-format.md).
            info.pax_headers["LIBARCHIVE.xattr." + xattr_key(n)] = base64.b64encode(v).decode().rstrip("=")
            info.pax_headers["SCHILY.xattr." + xattr_key(n)] = v.decode("utf-8", "surrogateescape")
        return info

    def file(self, path, data, mode=0o644, xattrs=None, base=None, member=True, kind="added"):
        old = ("file", base["mode"]) if base and not base.get("absent") else None
        self._change(path, kind, "file", mode, len(data), old=old, xattrs=xattrs, base=base)
        if member:
            self.members.append((self._info(path, tarfile.REGTYPE, mode, xattrs), data))
        return self

    def dir(self, path, mode=0o755, xattrs=None, member=True):
        self._change(path, "added", "dir", mode, xattrs=xattrs)
        if member:
            self.members.append((self._info(path, tarfile.DIRTYPE, mode, xattrs), None))
        return self

    def opaque_dir(self, path, base, subtree, mode=0o755):
        """A real dir replaced whole (`opaque_dir`: a dir member and its
        .wh..wh..opq marker), as `save` wrote for a removed and remade dir
        before it compared them; subtree: the real entries' base records."""
        self._change(path, "opaque_dir", "dir", mode, old=("dir", base["mode"]), base=base)
        self.members.append((self._info(path, tarfile.DIRTYPE, mode), None))
        self.members.append((self._info(os.fsdecode(path) + "/.wh..wh..opq", tarfile.REGTYPE, 0o644), b""))
        self.manifest["base"].extend(subtree)
        return self

    def symlink(self, path, target, member=True):
        self._change(path, "added", "symlink", 0o777, link=target)
        if member:
            info = self._info(path, tarfile.SYMTYPE, 0o777)
            info.linkname = os.fsdecode(target)
            self.members.append((info, None))
        return self

    def raw_member(self, info, data=None):
        """A payload member with no manifest change of its own."""
        self.members.append((info, data))
        return self

    def tar(self, order=None):
        """The tar bytes: manifest, the members (reordered by order(list) if
        given), sums."""
        text = json.dumps(self.manifest, indent=1).encode()
        payload = order(list(self.members)) if order else list(self.members)
        return tar_bytes(with_sums([(tarfile.TarInfo(".layover/manifest.json"), text)] + payload))

    def write(self, out, trailing=b"", order=None):
        return compress(self.tar(order) + trailing, out)


def dir_base(path):
    """The base record of an existing dir."""
    st = os.lstat(str(path))
    return {"type": "dir", "size": 0, "mode": st.st_mode & 0o7777, "fingerprint": None, "stale": False}


def real_base(path):
    """The base record of an existing regular file (dense)."""
    st = os.lstat(str(path))
    with open(str(path), "rb") as f:
        data = f.read()
    return {"type": "file", "size": st.st_size, "mode": st.st_mode & 0o7777, "fingerprint": fingerprint(data),
            "stale": False}
