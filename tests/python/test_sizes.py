"""SIZE parsing and formatting (vramtrace.sizes), same grammar as the vramtrace command."""
import pytest

from vramtrace.sizes import describe, format_size, parse_size


@pytest.mark.parametrize("text,expected", [
    ("4096", 4096),
    ("4096B", 4096),
    ("0", 0),
    ("1KiB", 1024),
    ("4k", 4096),
    ("1MiB", 1 << 20),
    ("1mib", 1 << 20),
    ("1.5GiB", 3 << 29),
    ("1.5 GiB", 3 << 29),
    ("2MB", 2000000),
    ("2.5kb", 2500),
    ("1T", 1 << 40),
    ("1TB", 10 ** 12),
    (" 7 ", 7),
    ("0.1KiB", 102),          # 102.4 rounds to 102
    ("0.0005KiB", 1),         # 0.512 rounds to 1
    (4096, 4096),
])
def test_parse_size_accepts(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", [
    "", "MiB", "1.5", "1.5B", "-1", "1 XB", "1..5MiB", "1.MiB", ".5MiB", "1e3",
    "99999999999TiB", None, 1.5, True, -4,
])
def test_parse_size_rejects(text):
    with pytest.raises(ValueError):
        parse_size(text)


def test_parse_size_error_names_the_text():
    with pytest.raises(ValueError, match="'12 parsecs'"):
        parse_size("12 parsecs")


@pytest.mark.parametrize("n,text", [
    (0, "0 B"), (1023, "1023 B"), (1024, "1 KiB"), (1536, "1.5 KiB"),
    (3 << 20, "3 MiB"), (3 << 29, "1.5 GiB"), (150 << 20, "150 MiB"), (-2048, "-2 KiB"),
])
def test_format_size(n, text):
    assert format_size(n) == text


def test_describe_carries_the_exact_number():
    assert describe(3145728) == "3 MiB (3145728 bytes)"
