"""SIZE strings, as the vramtrace command reads them (analyzer/base/vt_size.c).

Grammar: a non-negative number with an optional fraction, then an optional unit,
case-insensitive, optional blanks between: ``4096``, ``4096B``, ``1MiB``,
``1.5GiB``, ``2MB``, ``1.5 GiB``. Binary units K/KiB, M/MiB, G/GiB, T/TiB are powers
of 1024; decimal KB, MB, GB, TB are powers of 1000. A fraction of a byte is an
error; fractional sizes in other units are rounded to the nearest byte. Plain
non-negative ints are accepted as bytes. Pure functions, thread-safe.
"""
import re

_UNITS = {
    "": 1, "b": 1,
    "k": 1024, "kib": 1024, "m": 1024 ** 2, "mib": 1024 ** 2,
    "g": 1024 ** 3, "gib": 1024 ** 3, "t": 1024 ** 4, "tib": 1024 ** 4,
    "kb": 1000, "mb": 1000 ** 2, "gb": 1000 ** 3, "tb": 1000 ** 4,
}
_RE = re.compile(r"^\s*([0-9]+)(?:\.([0-9]+))?\s*([A-Za-z]*)\s*$")
_MAX = 2 ** 64 - 1


def parse_size(value):
    """Returns the number of bytes that `value` (str, or a non-negative int) names.
    Raises ValueError (with the offending text) when it is not a SIZE."""
    if isinstance(value, bool):
        raise ValueError("not a size: %r" % (value,))
    if isinstance(value, int):
        if value < 0:
            raise ValueError("size must not be negative: %r" % (value,))
        return value
    if not isinstance(value, str):
        raise ValueError("not a size: %r (use e.g. 4096, \"1MiB\", \"1.5GiB\", \"2MB\")"
                         % (value,))
    m = _RE.match(value)
    unit = m.group(3).lower() if m else None
    if not m or unit not in _UNITS:
        raise ValueError("not a size: %r (use e.g. 4096, 1MiB, 1.5GiB, 2MB)" % (value,))
    whole, frac = m.group(1), m.group(2)
    mult = _UNITS[unit]
    if frac is None:
        n = int(whole) * mult
    else:
        if mult == 1:
            raise ValueError("not a size: %r (a fraction of a byte)" % (value,))
        # exact rational arithmetic, rounded half up like llround
        num = int(whole + frac) * mult
        den = 10 ** len(frac)
        n = (2 * num + den) // (2 * den)
    if n > _MAX:
        raise ValueError("size too large: %r" % (value,))
    return n


def format_size(n):
    """A short human form of `n` bytes: "512 B", "3 MiB", "1.5 GiB" (like the
    vramtrace command's reports). Negative values get a "-" sign."""
    n = int(n)
    if n < 0:
        return "-" + format_size(-n)
    if n < 1024:
        return "%d B" % n
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    v = float(n)
    i = 0
    while v >= 1024 and i < len(units) - 1:
        v /= 1024
        i += 1
    if v >= 99.95 or v == int(v):
        return "%.0f %s" % (v, units[i])
    return "%.1f %s" % (v, units[i])


def describe(n):
    """`n` bytes as "3 MiB (3145728 bytes)" for messages that must carry numbers."""
    return "%s (%d bytes)" % (format_size(n), int(n))
