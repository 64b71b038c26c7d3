"""The suite finds the barrier bugs: every named variant is caught by exhaustive exploration (and
by the stateful hypothesis machine: tests/slow/test_long_hunts.py), and every property catches at
least one variant.

A variant that nothing catches, or a property that can never fail, is a gap in the suite.
"""

import pytest

import manifest
from flipcheck.generators.barriers import QUICK, barrier_machine
from flipcheck.properties.barriers_replay import replay
from flipcheck.model.barriers import AT_LEAST_ONCE, MODES, UNALIGNED, Config, format_event, parse_event
from flipcheck.properties.barriers_explore import explore_task
from flipcheck.properties.barriers_properties import PROPERTY_NAMES
from flipcheck.reference_impl.barriers import VARIANTS

# Each variant in each configuration it changes: explored next to the model (refinement), and
# with the property monitors only.
REFINED = [e for e in manifest.entries("barriers", check="refinement") if e["model"] in VARIANTS]
CAUGHT = [e for e in manifest.entries("barriers", check="properties") if e["model"] in VARIANTS]


def config_of(entry: dict) -> Config:
    c = entry["config"]
    return Config(c["channels"], c["mode"], c["after_finished"], c["alignment_timeout"])


def violated(entry: dict) -> list:
    return [] if entry["result"] == "success" else entry["result"]


def all_configs(channels: int = 3):
    return [Config(channels, m, f, t) for m in MODES for f in (True, False) for t in (False, True)
            if not (t and m != UNALIGNED)]


def test_manifest_lists_every_variant_in_every_configuration_it_changes():
    listed = {(e["model"], config_of(e)) for e in CAUGHT}
    expected = {(name, cfg) for name, cls in VARIANTS.items() for cfg in all_configs() if cls.modes(cfg)}
    assert listed == expected == {(e["model"], config_of(e)) for e in REFINED}
    assert {name for name, _ in listed} == set(VARIANTS)


@pytest.mark.parametrize("entry", REFINED, ids=manifest.entry_id)
def test_exploration_next_to_the_model_catches_variant_with_a_shortest_trace(entry):
    """Breadth-first exploration next to the model finds the pinned shortest counterexample."""
    with manifest.measured(entry):
        refined = explore_task(config_of(entry), entry["model"], entry["config"]["max_id"], check_properties=False)
    manifest.pin(entry, result=[v.property for v in refined.problems][0],
                 trace=[format_event(e) for e in refined.trace])
    assert [v.property for v in refined.problems] == ["refines_model"]


@pytest.mark.parametrize("entry", CAUGHT, ids=manifest.entry_id)
def test_property_monitors_catch_variant_with_a_shortest_trace(entry):
    """With the property monitors only (no model) exploration finds the pinned counterexample, or
    nothing where the variant differs from Flink in no property (pinned as "success")."""
    with manifest.measured(entry):
        found = explore_task(config_of(entry), entry["model"], entry["config"]["max_id"], refinement=False)
    properties = sorted({v.property for v in found.problems})
    manifest.pin(entry, result=properties or "success", trace=[format_event(e) for e in found.trace])
    assert found.complete == (not properties)


def test_every_variant_is_caught_by_a_property_somewhere():
    assert {e["model"] for e in CAUGHT if violated(e)} == set(VARIANTS)
    # The one configuration where only refinement sees a variant, and why it is fine.
    assert [(e["model"], e["config"]["alignment_timeout"]) for e in CAUGHT if not violated(e)] == [
        ("announcement-eop-no-alignment-start", False)]  # only a repeated alignment start differs


def machine_modes(name: str) -> list:
    """The modes whose stateful machine can show variant ``name`` (tests/slow/test_long_hunts.py
    runs each machine against it)."""
    cls = VARIANTS[name]
    return [m for m in MODES if any(cls.modes(c) for c in all_configs() if c.mode == m)]


# property -> (handler, mode, channels, events, extra Config options): one run it catches.
CATCHES = {
    "triggered_ids_increase": ("flink", AT_LEAST_ONCE, 2, "B1@0 E@0 B2@1 E@1", {}),  # Flink's own tracker
    "trigger_abort_exclusive": ("no-obsolete-check", UNALIGNED, 2, "C1@0 B1@1", {}),
    "aligned_holds_records_after_barrier": ("no-blocking", "aligned", 2, "B1@0 D@0", {}),
    "completed_checkpoint_leaves_no_channel_blocked": ("abort-keeps-channels-blocked", "aligned", 2, "B1@0 B2@1", {}),
    "blocked_channels_are_open": ("insert-barrier-before-eop", "aligned", 3, "B1@0 E@1", {}),
    "in_flight_exact": ("unaligned-captures-aligned-channels", UNALIGNED, 2, "B1@0 D@0", {}),
    "end_of_partition_alignment": ("eop-not-aligned", "aligned", 2, "B1@0 E@1", {}),
    "rpc_trigger_completes_at_once": ("no-complete-when-all-ended", UNALIGNED, 1, "E@0 T1", {}),
    "abort_reasons": ("tracker-subsumes", AT_LEAST_ONCE, 2, "B1@0 B2@0", {}),
    "alignment_start_recorded": ("announcement-eop-no-alignment-start", UNALIGNED, 2, "A1@0 E@1 B1@0",
                                 {"alignment_timeout": True}),
    "refines_model": ("insert-barrier-before-eop", UNALIGNED, 2, "T1", {}),
}


def test_every_property_has_a_catching_run():
    assert set(CATCHES) == set(PROPERTY_NAMES)


@pytest.mark.parametrize("property_name", sorted(CATCHES))
def test_property_catches_its_run(property_name):
    handler, mode, channels, tokens, options = CATCHES[property_name]
    config = Config(channels, mode, **options)
    result = replay(config, [parse_event(t) for t in tokens.split()], handler=handler)
    assert property_name in {v.property for v in result.violations}
