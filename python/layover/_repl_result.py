"""Part 4 of the REPL server that runs inside the sandbox: a call()'s result
as JSON, within the bounds the host reads it with (docs/python.md, call()).

Executed after _repl_io.py, _repl_out.py and _repl_exec.py and before
_repl_help.py and _server.py in one namespace (see
layover._boot.server_source); it is never imported on the host.  The names
used here without import come from _repl_io.py (_quote, MAX_DEPTH) and
_server.py (_NotSent, at call time).

The host refuses a result past max_output's bytes, one holding more JSON
values than max_output / 64 (at least 2**20), and a number of more than
4300 digits (repl.py, _client_frames.py).  An honest result past one of
them was made whole here and sent (hundreds of MB over the socket) before
the host refused it: it is refused here as its JSON is made (the values at
each list and dict, the bytes at each string and long number), before it is
made whole or sent.
"""
# flake8: noqa: F821


class _TooBig(Exception):
    """A call()'s value past one of the host's bounds; args: (kind,), "values", "bytes" or "digits"."""


MAX_RESULT_DIGITS = 4300  # the host's MAX_INT_DIGITS (_client_frames.py): Python's default int_max_str_digits
_BIG_BITS = 14285  # (10 ** 4300).bit_length(): an int of fewer bits has at most 4300 digits
_big = []  # [10 ** 4300], made at the first int that long


def result_dumps(obj, left, depth=0):
    """json_dumps(obj) while left = [values, bytes] stay >= 0, raising
    _TooBig at the first value past them. Values are counted as the host
    counts them (json_values_within: 1, then each list's items, at least 1,
    and each dict's keys and values, at least 1), at each list and dict.
    Bytes are counted for what can be long (strings, numbers past 64 bits):
    the rest (short numbers, null, true, false, brackets and commas) is
    bounded by the values' count, and result_text checks the whole."""
    if isinstance(obj, str):
        if len(obj) + 2 > left[1]:  # its JSON is at least that long: never quoted whole
            raise _TooBig("bytes")
        text = _quote(obj)
        left[1] -= len(text)
        if left[1] < 0:
            raise _TooBig("bytes")
        return text
    if isinstance(obj, int):  # bools too, at 1 bit
        if obj.bit_length() < 64:
            return json_dumps(obj)
        if obj.bit_length() >= _BIG_BITS:
            if not _big:
                _big.append(10 ** MAX_RESULT_DIGITS)
            if not -_big[0] < obj < _big[0]:  # its digits were quadratic to make, and the host's to read
                raise _TooBig("digits")
        text = int.__repr__(obj)
        left[1] -= len(text)
        if left[1] < 0:
            raise _TooBig("bytes")
        return text
    if depth >= MAX_DEPTH and isinstance(obj, (list, tuple, dict)):
        raise ValueError("it is nested deeper than %d lists and dicts, or holds itself" % MAX_DEPTH)
    if isinstance(obj, (list, tuple)):
        left[0] -= len(obj) or 1
        if left[0] < 0:
            raise _TooBig("values")
        parts = []
        for v in obj:  # a loop, not a comprehension: one frame a level (3.11's comprehensions take two)
            parts.append(result_dumps(v, left, depth + 1))
        return "[" + ",".join(parts) + "]"
    if isinstance(obj, dict):
        left[0] -= 2 * len(obj) or 1
        if left[0] < 0:
            raise _TooBig("values")
        parts = []
        for k, v in obj.items():
            if not isinstance(k, str):
                raise TypeError("JSON object keys must be str, not %s" % type(k).__name__)
            parts.append(result_dumps(k, left, depth + 1) + ":" + result_dumps(v, left, depth + 1))
        return "{" + ",".join(parts) + "}"
    return json_dumps(obj)  # None, a float; anything else is its TypeError


def result_text(name, value, max_values, max_bytes, printed=0):
    """The tool `name`'s value as JSON, or _NotSent saying why it cannot go
    to the host: not JSON (a set, bytes, a generator), nested too deep or
    holding itself, or past one of the host's bounds: max_bytes less the
    `printed` bytes of output the call sent, which the host counts against
    max_output with the result (3 MiB printed and 3 MiB returned under
    max_output=4 MiB were sent, and the host stopped the sandbox; attack33)."""
    left = max_bytes - max(printed, 0)
    try:
        if max_values < 1:  # the value itself, as the host counts it
            raise _TooBig("values")
        if left < 0:
            raise _TooBig("bytes")
        text = result_dumps(value, [max_values - 1, left])
        if len(text) > left:  # ASCII: its length is its size
            raise _TooBig("bytes")
        return text
    except _TooBig as e:
        kind = e.args[0]
        if kind == "values":
            why = ("more JSON values (lists, dicts, keys, numbers, strings) than call()'s limit of %d (max_output / "
                   "64, at least 2**20); return fewer, or write them to a file and read it with changed_files()"
                   % max_values)
        elif kind == "bytes":
            less = ", less the %d bytes of output it printed" % printed if printed > 0 else ""
            why = ("more bytes of JSON than call()'s limit of %d (max_output%s); return less, or write it to a file "
                   "and read it with changed_files()" % (max_bytes, less))
        else:
            why = ("a number of more than %d digits, past what the host reads (Python's int_max_str_digits); return "
                   "it as a str" % MAX_RESULT_DIGITS)
        raise _NotSent("tool %s returned %s" % (name, why)) from None
    except (TypeError, ValueError, RecursionError) as e:
        hint = "; return list(...) of it" if type(value).__name__ in ("generator", "map", "filter") else ""
        raise _NotSent("tool %s returned a value JSON cannot carry (%s: %s)%s; return lists, dicts with str "
                       "keys, str, int, finite float, bool or None" % (name, type(value).__name__, e, hint)) from None
