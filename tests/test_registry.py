"""cuelens.registry: the one helper every registry uses (issue 54) — explicit tables, one
unknown-name error naming the kind, the name and the known names."""

from __future__ import annotations

import doctest

import pytest

import cuelens.registry
from cuelens.errors import UserError
from cuelens.registry import Registry


def test_docstring_examples_run():
    failures, tried = doctest.testmod(cuelens.registry)
    assert tried == 3 and failures == 0


def test_entries_keep_registration_order_and_read_like_a_dict():
    table = Registry("colour", [("red", 1), ("blue", 2)])

    @table.register("green")
    def green() -> int:
        return 3

    assert table.names() == ["red", "blue", "green"] == list(table)
    assert table.get("green") is green and table["red"] == 1 and "blue" in table
    assert dict(table.items()) == {"red": 1, "blue": 2, "green": green}
    assert len(table) == 3 and table.choices(" | ") == "red | blue | green"


def test_an_unknown_name_is_one_user_error_naming_kind_option_and_choices():
    with pytest.raises(UserError) as error:
        Registry("colour", {"red": 1, "blue": 2}).get("Red")
    assert str(error.value) == "unknown colour 'Red'; choose from red, blue"
    with pytest.raises(UserError, match=r"^unknown colour 'x' \(--colour\); choose from red$"):
        Registry("colour", {"red": 1}, option="--colour").get("x")
    with pytest.raises(UserError, match=r"^unknown colour 'x'; choose from red, auto, rgb:HEX$"):
        Registry("colour", {"red": 1}, also=("auto", "rgb:HEX")).get("x")


def test_a_registry_of_a_field_names_its_api_argument_and_cli_option():
    with pytest.raises(UserError, match=r"^z_unit \(--z-unit\): unknown unit 'x'; choose from m$"):
        Registry("unit", {"m": 1}, field="z_unit").get("x")
    assert str(Registry("unit", {"m": 1}, field="z_unit").unknown("x", "--length-unit")) == \
        "unknown unit 'x' (--length-unit); choose from m"


def test_a_name_is_registered_once():
    table = Registry("colour", {"red": 1})
    with pytest.raises(ValueError, match="colour 'red' is registered twice"):
        table.add("red", 2)
    assert table["red"] == 1
