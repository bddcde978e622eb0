"""Position JSON: validation names the offending field; hidden hands; the planner."""

import json

import pytest

from engines.errors import IllegalActionError, InvalidPositionError
from engines.royal_battles import Side, parse_action, parse_cell
from engines.royal_battles.planner import plan, plan_hidden
from engines.royal_battles.position import loads, to_json
from tests.rb_helpers import position

ISSUE_EXAMPLE = """
{"game": "royal-battles",
 "options": {"allow_pass": false},
 "round": 5, "to_move": "black",
 "initiative": {"white": "3D", "black": "5S"},
 "board": {"d2": {"cards": ["JS", "8D"], "orientation": "portrait"},
           "c3": {"cards": ["9H"], "unit": {"side": "white", "kind": "pawn", "injury": 0}}},
 "hands": {"black": ["8D"], "white": null},
 "decks": {"white": 40, "black": 38}}
"""


def test_the_issue_example_loads_and_round_trips():
    state = loads(ISSUE_EXAMPLE)
    assert state.to_move is Side.BLACK and state.round == 5
    assert state.players[Side.WHITE].hand is None and state.players[Side.BLACK].deck == 38
    data = to_json(state)
    assert data["board"]["d2"]["cards"] == ["JS", "8D"]
    assert to_json(loads(json.dumps(data))) == data


@pytest.mark.parametrize("mutate,field", [
    (lambda d: d["board"]["c3"]["cards"].__setitem__(0, "1H"), "board.c3.cards[0]"),
    (lambda d: d["board"].__setitem__("h9", {"cards": ["2C"]}), "board.h9"),
    (lambda d: d["board"].__setitem__("e4", {"cards": [], "unit": {"side": "white",
                                                                   "kind": "rook"}}),
     "board.e4.unit"),
    (lambda d: d["board"]["c3"]["unit"].__setitem__("injury", 9), "board.c3.unit.injury"),
    (lambda d: d["board"]["c3"]["unit"].__setitem__("kind", "dragon"), "board.c3.unit.kind"),
    (lambda d: d["board"]["d2"].__setitem__("cards", ["8D", "8D", "8D"]), "cards"),
    (lambda d: d["decks"].__setitem__("white", 60), "decks.white"),
    (lambda d: d["initiative"].__setitem__("black", "5X"), "initiative.black"),
    (lambda d: d.__setitem__("to_move", "green"), "to_move"),
    (lambda d: d["options"].__setitem__("fly", True), "options.fly"),
    (lambda d: d.__setitem__("extra", 1), "extra"),
    (lambda d: d["board"]["d2"].__setitem__("orientation", "diagonal"), "board.d2.orientation"),
])
def test_invalid_positions_name_the_field(mutate, field):
    data = json.loads(ISSUE_EXAMPLE)
    mutate(data)
    with pytest.raises(InvalidPositionError) as err:
        loads(json.dumps(data))
    assert field in str(err.value)


def test_two_units_on_a_cell_and_malformed_json():
    text = ('{"board": {"c3": {"cards": ["9H"], "unit": {"side": "white", "kind": "pawn"}},'
            ' "C3": {"cards": ["9S"], "unit": {"side": "black", "kind": "pawn"}}},'
            ' "initiative": {"white": "2C", "black": "3C"}}')
    with pytest.raises(InvalidPositionError, match="twice"):
        loads(text)
    with pytest.raises(InvalidPositionError, match="not valid JSON"):
        loads('{"board": ')
    with pytest.raises(InvalidPositionError, match="JSON object"):
        loads("[1, 2]")
    five = {f"{f}1": {"cards": ["2C"], "unit": {"side": "white", "kind": "pawn"}}
            for f in "abcde"}
    with pytest.raises(InvalidPositionError, match="an army has 4"):
        loads(json.dumps({"board": five, "initiative": {"white": "2H", "black": "3H"}}))


def test_hidden_hand_draws_and_moves():
    state = loads(ISSUE_EXAMPLE)
    # black (known hand) moves; then white's hidden hand takes a pre-turn draw it can't see
    state.players[Side.BLACK].hand = ["8D"] and state.players[Side.BLACK].hand
    legal = {str(a) for a in state.legal_actions()}
    assert "black pass" not in legal or not any(a.startswith("black move") for a in legal)
    hidden = position({"c2": ("2C", "white pawn"), "a5": ("4S", "black pawn")},
                      hands={"white": None, "black": []}, hand_sizes={"white": 2})
    legal = {str(a) for a in hidden.legal_actions()}
    assert "white pass" in legal  # the assistant can't know the hand: passing is possible
    assert "white move c2-c3 7H" in legal and "white move c2-c3 7S" not in legal
    hidden.apply(parse_action("white move c2-c3 7H"))
    assert hidden.players[Side.WHITE].hand_size == 1
    hidden.apply(parse_action("white keep"))
    assert hidden.to_move is Side.BLACK


def test_hidden_hand_draw_is_unknown():
    hidden = position({"c2": ("2C", "white pawn"), "a5": ("4S", "black pawn")},
                      hands={"white": None, "black": []}, phase="pre-turn-draw")
    hidden.apply(parse_action("white take-draw"))
    assert [str(a) for a, _ in hidden.chance_outcomes()] == ["white draw ?"]
    with pytest.raises(IllegalActionError, match="hand is hidden"):
        hidden.apply(parse_action("white draw 9C"))  # a named card has no hand to go into
    hidden.apply(parse_action("white draw ?"))
    assert hidden.players[Side.WHITE].hand_size == 1


def test_planner_lists_moves_and_attacks_with_outcomes():
    state = position({"d4": ("JS", "black king"), "c3": ("9C", "white pawn"),
                      "d2": ("4C", "white knight"), "a1": ("2H", "white king")},
                     to_move="black", initiative=("3D", "5S"),
                     hands={"white": [], "black": ["8D"]})
    options = [o.to_json() for o in plan(state)]
    keys = {"unit", "card", "to", "target", "style", "trumps", "needed", "hit", "critical",
            "effects", "key", "draws"}
    assert all(keys <= set(o) for o in options)
    no_attack = [o for o in options if o["to"] == "d3" and o["target"] is None]
    assert len(no_attack) == 1 and no_attack[0]["style"] is None
    hit = next(o for o in options if o["to"] == "d3" and o["target"] == "c3"
               and o["style"] == "optimal")
    assert hit["trumps"] == ["3D", "5S", "9C"] and hit["needed"] == 1 and hit["hit"]
    assert hit["effects"] == [{"cell": "c3", "damage": 2, "healed": 0, "removed": False}]
    assert hit["key"] and hit["draws"] == 2


def test_planner_for_a_hidden_hand():
    state = position({"d4": ("JS", "black king"), "c3": ("9C", "white pawn")},
                     to_move="black", initiative=("3D", "5S"),
                     hands={"white": [], "black": None}, hand_sizes={"black": 3})
    options = [o.to_json() for o in plan_hidden(state)]
    o = next(o for o in options if o["to"] == "d3" and o["target"] == "c3"
             and o["style"] == "optimal")
    assert o["known_trumps"] == ["3D", "5S", "9C"] and o["needed"] == 1
    assert o["playable_colours"] == ["red"] and o["trump_ranks"] == "3 5 7 9"
    assert parse_cell(o["to"]) == parse_cell("d3")


def test_a_position_with_one_side_wiped_out_is_over():
    state = position({"c2": ("2C", "white pawn")}, to_move="black")
    assert state.is_terminal() and state.outcome.winner is Side.WHITE
    assert state.outcome.reason == "annihilation" and state.legal_actions() == []
    placing = position({"a1": ("2C", "white pawn")}, phase="place", to_move="black")
    assert not placing.is_terminal()  # during set-up an empty side is just not placed yet
