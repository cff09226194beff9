"""application.dice: where the server's dice come from."""

from __future__ import annotations

import pytest

from application.dice import DiceSource, ScriptedDice, SecretsDice, SeededDice


def test_secrets_dice_roll_every_face_and_nothing_else() -> None:
    dice: DiceSource = SecretsDice()

    rolls = {dice() for _ in range(600)}

    assert rolls == {1, 2, 3, 4, 5, 6}


def test_seeded_dice_repeat_the_same_rolls_for_the_same_seed() -> None:
    first, second, other = SeededDice(42), SeededDice(42), SeededDice(43)

    rolls = [first() for _ in range(50)]

    assert rolls == [second() for _ in range(50)]
    assert rolls != [other() for _ in range(50)]
    assert set(rolls) <= {1, 2, 3, 4, 5, 6}


def test_scripted_dice_roll_the_given_values_then_refuse() -> None:
    dice = ScriptedDice([6, 1])

    assert (dice(), dice()) == (6, 1)
    with pytest.raises(RuntimeError):
        dice()


def test_scripted_dice_refuse_a_value_no_die_shows() -> None:
    with pytest.raises(ValueError):
        ScriptedDice([7])()
