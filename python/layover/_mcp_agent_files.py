"""The MCP file tools, part of the tools' agent (see _mcp_agent.py): read,
write, edit, list and search files inside the sandbox.

Not a module of its own at run time: `layover mcp` sends this text followed
by _mcp_agent.py's as one program (layover._mcp_sandbox.agent_frame), so the
names used here (Fail, resolve, shown, clip, STOPS, the caps) are
_mcp_agent.py's, looked up when a tool is called.
"""
# flake8: noqa: F821
import errno
import fnmatch
import json
import os
import re
import select
import signal
import stat
import threading
import time


def missing(path, what=""):
    """A path that is not there, and the tool that shows what is (the model
    guessed again without it: newuser15).  what: a word before it ("cwd ")."""
    return Fail("%s%s: no such file or directory; list_directory shows what is there (paths are relative to the "
                "target, %s)" % (what, shown(path), TARGET))


def read_text(path, what):
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise missing(path)
    except OSError as e:
        raise Fail("%s: %s" % (shown(path), e.strerror))
    if stat.S_ISDIR(st.st_mode):
        raise Fail("%s is a directory; use list_directory" % shown(path))
    if not stat.S_ISREG(st.st_mode):
        raise Fail("%s is not a regular file" % shown(path))
    return st


def open_regular(path, mode="rb"):
    """Opens path ("rb", or "wb": emptied, never created), refusing what is
    not a regular file by then. O_NONBLOCK: a FIFO or device put there since
    the caller's check (the agent's own commands run beside the call) fails
    the open or the fstat, never blocks the call."""
    fd = os.open(path, (os.O_RDONLY if mode == "rb" else os.O_WRONLY) | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Fail("%s is not a regular file" % shown(path))
        os.set_blocking(fd, True)
        if mode == "wb":
            os.ftruncate(fd, 0)
        return os.fdopen(fd, mode)
    except BaseException:
        os.close(fd)
        raise


def replace_file(path, data):
    """Puts data at path whole or not at all: written to a new file in the
    same dir, then renamed over path. Before, the file was emptied and
    written in place: a write stopped midway (--max-size, a full disk) left
    it cut short, the old content gone. A file there keeps its permission
    bits and xattrs; a new one gets 0666 less the umask, as open() made it.
    A symlink at path is written through (its target replaced), as open()
    wrote through it. The content goes to an O_TMPFILE file (no name while
    it is written), named (.layover-write-*.tmp) only once complete, and
    renamed at once: a kill of the agent leaves that name only between
    those two calls. Where the dir has no O_TMPFILE, or the link is refused
    (no /proc), a named temp file from the start, removed when the write
    fails; a kill mid-write leaves it. A writable file in a dir the agent
    may not write is written in place, as before."""
    real = os.path.realpath(path) if os.path.islink(path) else path
    try:
        st = os.stat(real)
        # Never S_ISUID/S_ISGID: a write clears them (new content is not what
        # was made setuid), so the replacement does not get them back.
        mode = stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID) if stat.S_ISREG(st.st_mode) else None
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise write_failed(real, e)
    if mode is not None and not os.access(real, os.W_OK):
        # A rename would replace a file its mode says is not to be written
        # (0444): refused, as the write in place was.
        raise write_failed(real, PermissionError(errno.EACCES, os.strerror(errno.EACCES)))
    tmp, fd, d = None, None, os.path.dirname(real)
    try:
        try:
            fd = unnamed_temp(d)
            if fd is None:
                tmp, fd = new_temp(d)
        except PermissionError:
            if mode is None:
                raise
            # A writable file in a dir the agent may not write (no temp file
            # there): written in place, as before, not atomic; its own mode
            # and xattrs stay.
            with open_regular(real, "wb") as f:
                f.write(data)
            return
        fill(fd, data, real, mode)
        if tmp is None:
            tmp = link_temp(fd, d)
            if tmp is None:  # the link refused: a named temp file, written again
                os.close(fd)
                fd = None
                tmp, fd = new_temp(d)
                fill(fd, data, real, mode)
        os.close(fd)
        fd = None
        os.rename(tmp, real)
        tmp = None
    except OSError as e:
        raise write_failed(real, e)
    finally:
        if fd is not None:
            os.close(fd)
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def copy_xattrs(path, fd):
    """The file's extended attributes (user.*, an ACL) onto its replacement:
    written in place, the file kept them, and a patch without them would
    remove them from the real file. One the sandbox may not set is left;
    security.* and trusted.* are never copied: a file capability
    (security.capability) is cleared by a write too, and a label is the
    system's, not the file's content."""
    try:
        names = os.listxattr(path)
    except OSError:
        return
    for name in names:
        if name.startswith(("security.", "trusted.")):
            continue
        try:
            os.setxattr(fd, name, os.getxattr(path, name))
        except OSError:
            pass


def fill(fd, data, real, mode):
    """The new content in fd, then the mode and xattrs of the file it
    replaces (mode None: a new file)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    if mode is not None:
        copy_xattrs(real, fd)
        os.fchmod(fd, mode)


def temp_name():
    return ".layover-write-%s.tmp" % os.urandom(8).hex()


def unnamed_temp(d):
    """fd of a new empty file in d with no name yet (O_TMPFILE), 0666 less
    the umask; None where d's filesystem or the kernel has none (EINVAL,
    EOPNOTSUPP, EISDIR). An overlay has them since Linux 6.6. Any other
    error (EACCES, ENOSPC, EROFS) is raised, as new_temp's would be."""
    flags = getattr(os, "O_TMPFILE", 0)
    if not flags:
        return None
    try:
        return os.open(d, flags | os.O_WRONLY | os.O_CLOEXEC, 0o666)
    except OSError as e:
        if e.errno in (errno.EINVAL, errno.EOPNOTSUPP, errno.EISDIR):
            return None
        raise


def link_temp(fd, d):
    """Names unnamed_temp's file fd in d (.layover-write-*.tmp), for the
    rename; None when the link is refused (no /proc). linkat with
    AT_SYMLINK_FOLLOW on /proc/self/fd/N: os.link without a dir fd calls
    link(2), which links the magic symlink itself (EXDEV); a dst_dir_fd
    makes it linkat."""
    try:
        dfd = os.open(d, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        while True:
            name = temp_name()
            try:
                os.link("/proc/self/fd/%d" % fd, name, dst_dir_fd=dfd, follow_symlinks=True)
                return os.path.join(d, name)
            except FileExistsError:
                continue
            except OSError:
                return None
    finally:
        os.close(dfd)


def new_temp(d):
    """(name, fd) of a new empty file in d, 0666 less the umask."""
    while True:
        name = os.path.join(d, temp_name())
        try:
            return name, os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            continue


def write_failed(path, e):
    """A write refused outside the target says why and where to write: a bare
    'Permission denied' on /etc/x never tells an agent that the sandbox shows
    the rest of the system read-only."""
    why = "%s: %s" % (shown(path), e.strerror)
    inside = path == TARGET or path.startswith(TARGET.rstrip("/") + "/")
    if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM) and not inside:
        why += ("; this path is outside the target (%s), which the sandbox shows read-only: write under the "
                "target, where a person reviews and applies the changes" % TARGET)
    return Fail(why)


def op_read_file(req, rid):
    path = resolve(req.get("path"))
    st = read_text(path, "read")
    offset = max(int(req.get("offset") or 1), 1)
    limit = min(max(int(req.get("limit") or 2000), 1), 10000)
    lines, size, n, more, clipped = [], 0, 0, False, False
    try:
        with open_regular(path) as f:
            if b"\0" in f.read(8192):
                raise Fail("%s is a binary file (%d bytes); inspect it with run_command (od, xxd, file)"
                           % (shown(path), st.st_size))
            f.seek(0)
            for raw in f:
                n += 1
                if n < offset:
                    continue
                if len(lines) >= limit or size > READ_CAP:
                    more = True
                    break
                text = raw.rstrip(b"\n").decode("utf-8", "replace")
                if len(text) > LINE_CAP:
                    text, clipped = text[:LINE_CAP] + " [... line cut at %d characters]" % LINE_CAP, True
                line = "%6d\t%s" % (n, text)
                size += len(line) + 1
                lines.append(line)
    except OSError as e:
        raise Fail("%s: %s" % (shown(path), e.strerror))
    first = offset if lines else 0
    last = offset + len(lines) - 1 if lines else 0
    return {"path": shown(path), "content": "\n".join(lines), "start_line": first, "end_line": last,
            "size": st.st_size, "truncated": more or clipped, "next_offset": last + 1 if more else None,
            "lines": None if lines else n}  # read whole: an offset past the end says how many there are


def op_write_file(req, rid):
    path = resolve(req.get("path"))
    content = req.get("content")
    if not isinstance(content, str):
        raise Fail("content must be a string")
    data = content.encode("utf-8", "surrogateescape")
    existed = os.path.lexists(path)
    if os.path.exists(path):
        read_text(path, "write")  # a dir, FIFO or device: a clear error, not a blocked call
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    except OSError as e:
        raise write_failed(path, e)
    replace_file(path, data)
    return {"path": shown(path), "bytes_written": len(data), "created": not existed}


def op_edit_file(req, rid):
    path = resolve(req.get("path"))
    old, new = req.get("old_string"), req.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str):
        raise Fail("old_string and new_string must be strings")
    if not old:
        raise Fail("old_string is empty; give the exact text to replace (read_file shows it), or write_file to "
                   "write the whole file")
    read_text(path, "edit")
    if old == new:  # it wrote the file back as it was and said "replaced" before newuser17
        raise Fail("old_string and new_string are the same, so %s would not change; give the new text in "
                   "new_string" % shown(path))
    try:
        with open_regular(path) as f:
            text = f.read().decode("utf-8", "surrogateescape")
    except OSError as e:
        raise Fail("%s: %s" % (shown(path), e.strerror))
    count = text.count(old)
    if count == 0:
        raise Fail("old_string not found in %s; read_file it and copy the text exactly" % shown(path))
    if count > 1 and not req.get("replace_all"):
        raise Fail("old_string found %d times in %s; add surrounding lines to make it unique, or set "
                   "replace_all" % (count, shown(path)))
    replace_file(path, text.replace(old, new).encode("utf-8", "surrogateescape"))
    return {"path": shown(path), "replacements": count}


def kind_of(mode):
    for test, name in ((stat.S_ISDIR, "dir"), (stat.S_ISREG, "file"), (stat.S_ISLNK, "symlink"),
                       (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket")):
        if test(mode):
            return name
    return "other"


def op_list(req, rid):
    root = resolve(req.get("path"))
    depth = min(max(int(req.get("depth") or 1), 1), 5)
    cap = int(req.get("cap", 1000))
    if not os.path.lexists(root):
        raise missing(root)
    if not os.path.isdir(root):
        raise Fail("%s: not a directory" % shown(root))
    entries, more = [], False
    todo = [(root, 1)]
    while todo and not more:
        d, level = todo.pop(0)
        try:
            names = sorted(os.listdir(d))
        except OSError as e:
            entries.append({"path": os.path.relpath(d, root) + "/", "type": "error", "size": 0,
                            "error": e.strerror})
            continue
        for name in names:
            full = os.path.join(d, name)
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if len(entries) >= cap:
                more = True
                break
            kind = kind_of(st.st_mode)
            entries.append({"path": os.path.relpath(full, root), "type": kind, "size": st.st_size})
            if kind == "dir" and level < depth:
                todo.append((full, level + 1))
    return {"path": shown(root), "entries": entries, "truncated": more}


SEARCH_TIMEOUT = 30.0  # seconds a search_files call may take (its `timeout` argument, max 600)
SEARCHES = set()  # the pids of searches running, killed at exit


def op_search(req, rid):
    """The search runs in a child process: Python's re holds the GIL and
    cannot be interrupted, so a catastrophic pattern ((a+)+$) in a thread
    spun the whole agent (every other call, cancel too) until the server
    ended. The child is killed at the time limit or on cancel."""
    try:
        rx = re.compile(req.get("pattern") or "")
    except re.error as e:
        raise Fail("pattern is not a valid regular expression: %s" % e)
    if not req.get("pattern"):
        raise Fail("pattern is empty")
    root = resolve(req.get("path"))
    if not os.path.lexists(root):
        raise missing(root)
    glob = req.get("glob") or None
    cap = int(req.get("cap", 500))
    limit = float(req.get("timeout") or SEARCH_TIMEOUT)
    stop = STOPS.setdefault(rid, threading.Event())  # main() made it: a cancel may have come already
    try:
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError as e:
            os.close(r)
            os.close(w)
            raise Fail("cannot start the search: %s" % e.strerror)
        if pid == 0:  # the child: the search, its result as JSON on the pipe
            code = 0
            try:
                os.close(r)
                try:
                    fds = [int(n) for n in os.listdir("/proc/self/fd")]
                except OSError:
                    fds = []
                for fd in fds:  # the agent's pipes and socket are not the search's to hold open
                    if fd > 2 and fd != w:
                        try:
                            os.close(fd)
                        except OSError:
                            pass
                view = memoryview(json.dumps(search_tree(rx, root, glob, cap)).encode("ascii"))
                while view:
                    view = view[os.write(w, view):]
            except BaseException:
                code = 1
            os._exit(code)
        SEARCHES.add(pid)
        os.close(w)
        out, why, ended = [], None, False
        end = time.monotonic() + limit
        try:
            while True:
                if stop.is_set():
                    why = "cancelled"
                    break
                left = end - time.monotonic()
                if left <= 0:
                    why = "timeout"
                    break
                if select.select([r], [], [], min(left, 0.1))[0]:
                    chunk = os.read(r, 1 << 16)
                    if not chunk:
                        ended = True
                        break
                    out.append(chunk)
        finally:
            if not ended:  # a time limit, a cancel, or an error here: the search must not spin on
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            os.close(r)
            status = os.waitpid(pid, 0)[1]
            SEARCHES.discard(pid)
    finally:
        STOPS.pop(rid, None)
    if why == "cancelled":
        raise Fail("cancelled")
    if why == "timeout":
        raise Fail("stopped after %g s, its time limit: a pattern with nested repetition, such as (a+)+, can take "
                   "exponential time on one line; simplify the pattern (e.g. a+ for (a+)+), narrow path or glob, "
                   "or raise timeout (at most 600 s)" % limit)
    try:
        return json.loads(b"".join(out).decode("ascii"))
    except ValueError:
        raise Fail("the search failed inside the sandbox (status %d); narrow path or glob"
                   % (status >> 8 if status & 0x7f == 0 else 128 + (status & 0x7f)))


def search_tree(rx, root, glob, cap):
    """The search itself, in op_search's child."""
    matches, files, more = [], 0, False
    walk = [(os.path.dirname(root), [], [os.path.basename(root)])] if os.path.isfile(root) else os.walk(root)
    for d, dirs, names in walk:
        dirs[:] = sorted(x for x in dirs if x != ".git")
        for name in sorted(names):
            if more:
                break
            full = os.path.join(d, name)
            rel = shown(full)
            if glob and not (fnmatch.fnmatch(name, glob) or fnmatch.fnmatch(rel, glob)):
                continue
            try:
                if not stat.S_ISREG(os.lstat(full).st_mode) or os.path.getsize(full) > 8 << 20:
                    continue
                with open(full, "rb") as f:
                    data = f.read()
            except OSError:
                continue
            if b"\0" in data[:8192]:
                continue
            files += 1
            for no, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                if rx.search(line):
                    if len(matches) >= cap:
                        more = True
                        break
                    matches.append("%s:%d:%s" % (rel, no, line[:300]))
    return {"matches": matches, "files_searched": files, "truncated": more}
