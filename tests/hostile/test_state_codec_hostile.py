"""Resume directories are read back through flipcheck/state_codec.py: any JSON value decodes to
a state or is refused with CodecError, never another exception, and never runs code."""

from hypothesis import given, settings, strategies as st

from flipcheck.state_codec import STATE_CLASSES, CodecError, decode

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(["n", "f", "x"]), children, max_size=3)
    | st.fixed_dictionaries({"n": st.sampled_from(sorted(STATE_CLASSES) + ["os.system", "tuple"]),
                             "f": st.lists(children, max_size=12)}),
    max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(document=_JSON)
def test_any_json_decodes_or_is_refused_in_one_line(document):
    try:
        decode(document)
    except CodecError as error:
        assert str(error) and "\n" not in str(error)


def test_deep_nesting_is_refused():
    document: list = []
    for _ in range(200):
        document = [document]
    try:
        decode(document)
    except CodecError as error:
        assert "deeply" in str(error)
    else:
        raise AssertionError("a 200-deep document was decoded")
