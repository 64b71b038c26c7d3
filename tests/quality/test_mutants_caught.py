"""The mutant catalogue is documented and the gallery shows what caught each mutant; the hunt of
every mutant (kill rate 100%) is README's `flipcheck mutants`, run as documented (exit 0) by
tests/slow/test_documented_commands_slow.py; each design's quality tests catch its mutants too."""

from flipcheck.designs.mutants import catalogue, hunt


def test_catalogue_entries_are_documented():
    for mutant in catalogue().values():
        assert mutant.description, mutant.id
        assert mutant.flink_issue is None or mutant.flink_issue.startswith("FLINK-"), mutant.id


def test_gallery_writes_a_page_and_a_picture_per_caught_mutant(tmp_path):
    from flipcheck.designs.mutants import write_gallery

    chosen = [catalogue()[m] for m in ("wiki-b", "eop-not-aligned", "protocol-pre-flip-147", "seed-finished-by-partitions")]
    page = write_gallery([(m, hunt(m, 10)) for m in chosen], str(tmp_path))
    text = open(page).read()
    for mutant in chosen:
        assert f"## `{mutant.id}`" in text
        assert (tmp_path / "img" / f"mutant-{mutant.id}.svg").read_text().lstrip().startswith(("<?xml", "<svg"))


def test_plan_counterexamples_are_shrunk():
    detection = hunt(catalogue()["flink-before-40482"], 10)
    assert detection.counterexample_size <= 3


def test_gallery_states_a_wiring_counterexample_in_words(tmp_path):
    # FLINK-22863's counterexample is a POINTWISE (upstream, downstream) parallelism pair, not a
    # job graph: the gallery says it in a sentence instead of handing it to the plan renderer.
    from flipcheck.designs.mutants import Detection, write_gallery

    mutant = catalogue()["flink-before-22863"]
    pair = (2366, 7097)  # the shape the float wiring gets wrong (docs/prove.md)
    detection = Detection(True, "pointwise_wiring", "sweep", 1, 0.0, sum(pair), pair)
    text = open(write_gallery([(mutant, detection)], str(tmp_path))).read()
    assert f"POINTWISE edge {pair[0]} → {pair[1]}" in text
    assert not (tmp_path / "img" / f"mutant-{mutant.id}.svg").exists()
