"""The record of the last passing run (vramtrace.baseline)."""
import json

import pytest

from vramtrace import baseline


def test_missing_file_is_an_empty_baseline(tmp_path):
    assert baseline.load(str(tmp_path / "none.json")) == {}


def test_save_then_load_round_trip(tmp_path):
    p = tmp_path / ".vramtrace-pytest.json"
    tests = {"t.py::a": baseline.entry(10, 20, 0), "t.py::b": baseline.entry(5, 5, None)}
    baseline.save(str(p), tests)
    data = json.loads(p.read_text())
    assert data["format"] == "vramtrace-pytest" and data["version"] == 1
    assert baseline.load(str(p)) == tests
    assert tests["t.py::a"]["peak_bytes"] == 20 and tests["t.py::a"]["peak_bytes_min"] == 10
    assert [x.name for x in tmp_path.iterdir()] == [p.name]   # no temporary file left


@pytest.mark.parametrize("text", ["{not json", "[]", '{"format":"x","version":1,"tests":{}}',
                                  '{"format":"vramtrace-pytest","version":2,"tests":{}}'])
def test_unreadable_baselines_are_refused(tmp_path, text):
    p = tmp_path / "b.json"
    p.write_text(text)
    with pytest.raises(baseline.BaselineError, match="b.json"):
        baseline.load(str(p))


def test_increase_is_counted_only_when_certain():
    old = {"peak_bytes": 100, "peak_bytes_min": 80}
    assert baseline.increase(None, 10 ** 9) == 0        # no earlier passing run
    assert baseline.increase(old, 100) == 0
    assert baseline.increase(old, 101) == 1
    assert baseline.increase(old, 150, tolerance=40) == 10
    assert baseline.increase(old, 140, tolerance=40) == 0
