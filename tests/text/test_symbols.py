"""Symbol tables: specials, round trips, unknown symbols."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aligner.text.symbols import SymbolTable, UnknownSymbolError

letters = st.lists(st.sampled_from(list("abcdefgh ,.")), max_size=40)


def test_specials_have_fixed_ids():
    table = SymbolTable(["a", "b", "<pad>", "a"])
    assert table.symbols[:4] == ["<pad>", "<unk>", "<s>", "</s>"]
    assert (table.pad_id, table.unk_id, table.bos_id, table.eos_id) == (0, 1, 2, 3)
    assert len(table) == 6 and table.encode(["a", "b"]) == [4, 5]


@given(letters)
def test_encode_decode_round_trip(tokens):
    table = SymbolTable(list("abcdefgh ,."))
    assert table.decode(table.encode(tokens)) == tokens


def test_to_dict_round_trip_is_json():
    table = SymbolTable(["ˈoʊ", "AH0", " "])
    back = SymbolTable.from_dict(json.loads(json.dumps(table.to_dict())))
    assert back == table and back.symbols == table.symbols


def test_unknown_error_lists_symbols_and_positions():
    table = SymbolTable(list("abc"))
    with pytest.raises(UnknownSymbolError) as err:
        table.encode(list("abxcxq"), context="utt7")
    msg = str(err.value)
    assert "'x' at tokens 2, 4" in msg and "'q' at token 5" in msg and "utt7" in msg
    assert err.value.unknown == {"x": [2, 4], "q": [5]}


def test_unknown_map_uses_unk():
    table = SymbolTable(list("abc"))
    assert table.encode(list("axb"), unknown="map") == [4, table.unk_id, 5]


def test_decode_strips_specials_and_checks_range():
    table = SymbolTable(list("ab"))
    assert table.decode([2, 4, 1, 5, 3, 0], strip_specials=True) == ["a", "<unk>", "b"]
    with pytest.raises(ValueError, match="out of range"):
        table.decode([99])
