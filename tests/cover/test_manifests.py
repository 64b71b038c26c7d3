"""Every manifest under tests/manifests/ fits the one schema (tests/manifests/schema.json,
docs/manifests.md), and the schema check rejects what the schema forbids."""

import json

import pytest

import manifest

DESIGNS = sorted(path.stem.replace("_", "-") for path in manifest.DIRECTORY.glob("*.json") if path.stem != "schema")


def test_the_six_designs_have_a_manifest():
    assert DESIGNS == manifest.schema()["$defs"]["design"]["enum"]


@pytest.mark.parametrize("design", DESIGNS)
def test_manifest_fits_the_schema(design):
    assert manifest.schema_errors(manifest.load(design)) == []


@pytest.mark.parametrize("design", DESIGNS)
def test_every_entry_names_its_manifests_design_and_is_one_configuration(design):
    loaded = manifest.load(design)
    assert loaded["design"] == design and {e["design"] for e in loaded["entries"]} == {design}
    keys = [json.dumps([e["model"], e["check"], e["config"], e.get("properties")], sort_keys=True)
            for e in loaded["entries"]]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("design", DESIGNS)
def test_manifest_is_kept_in_the_regenerated_layout(design):
    """`make manifests` writes dump()'s layout, so a regeneration diff shows only what moved."""
    assert manifest.path_of(design).read_text() == manifest.dump(manifest.load(design))


def good_entry() -> dict:
    return {"design": "barriers", "model": "spec", "check": "states", "config": {"channels": 2},
            "result": "success", "distinct_states": 3, "seconds": 0.5}


@pytest.mark.parametrize("change,error", [
    ({"seconds": None}, "$.entries[0].seconds: NoneType is not number"),
    ({"config": [2, 3]}, "$.entries[0].config: list is not object"),
    ({"distinct_states": -1}, "$.entries[0].distinct_states: -1 < 0"),
    ({"distinct_states": True}, "$.entries[0].distinct_states: bool is not integer"),
    ({"check": "guess"}, "$.entries[0].check: 'guess' not in"),
    ({"result": []}, "$.entries[0].result: matches none of"),
    ({"states": 3}, "$.entries[0]: unexpected field 'states'"),
])
def test_schema_check_rejects_a_bad_entry(change, error):
    bad = {"comment": "", "design": "barriers", "entries": [dict(good_entry(), **change)]}
    assert manifest.schema_errors({**bad, "entries": [good_entry()]}) == []
    errors = manifest.schema_errors(bad)
    assert len(errors) == 1 and errors[0].startswith(error)


def test_schema_check_names_a_missing_field():
    entry = good_entry()
    del entry["model"]
    assert manifest.schema_errors({"comment": "", "design": "barriers", "entries": [entry]}) == [
        "$.entries[0]: missing 'model'"]


def test_pin_compares_measured_values_as_the_manifest_holds_them(monkeypatch):
    monkeypatch.setattr(manifest, "REGENERATE", False)
    entry = dict(good_entry(), trace=[["start", 0]])
    manifest.pin(entry, distinct_states=3, trace=[("start", 0)])
    with pytest.raises(AssertionError):
        manifest.pin(entry, distinct_states=4)
