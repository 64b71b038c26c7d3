"""docs/barriers.md names every property, variant and z3 invariant, and shows the pinned counts."""

from pathlib import Path

import manifest
from flipcheck.model.barriers import MODES, UNALIGNED, Config
from flipcheck.properties.barriers_properties import PROPERTY_NAMES
from flipcheck.properties.z3_barriers import INVARIANTS
from flipcheck.reference_impl.barriers import VARIANTS

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "docs" / "barriers.md").read_text()


def test_doc_names_every_property_variant_and_invariant():
    invariants = {name for mode in MODES if mode != "at-least-once" for t in (False, True)
                  if not (t and mode != UNALIGNED) for name in INVARIANTS(Config(3, mode, alignment_timeout=t))}
    missing = [n for n in (*PROPERTY_NAMES, *VARIANTS, *invariants) if f"`{n}`" not in TEXT]
    assert missing == []


def test_doc_shows_the_pinned_model_counts():
    for entry in manifest.entries("barriers", model="spec", check="states"):
        assert f"| {entry['distinct_states']} | {entry['transitions']} | {entry['depth']} |" in TEXT
