"""The six worked examples at the end of the rules page, as golden tests."""

from engines.royal_battles import Phase, Side, Style, parse_action, parse_cell
from engines.royal_battles.combat import resolve_attack
from engines.royal_battles.state import GameState
from tests.rb_helpers import position


def _after_setup() -> GameState:
    state = GameState.new({Side.WHITE: ["knight", "pawn", "king", "queen"],
                           Side.BLACK: ["king", "pawn", "rook", "bishop"]})
    for text in ["white setup a1 10D", "white setup c1 2C", "white setup e1 7S",
                 "white setup g1 QC", "black setup a5 JS", "black setup c5 8H",
                 "black setup e5 4D", "black setup g5 9C",
                 "white place knight a1", "black place king a5", "white place pawn c1",
                 "black place pawn c5", "white place king e1", "black place rook e5",
                 "white place queen g1", "black place bishop g5"]:
        state.apply_text(text)
    return state


def test_example_1_initiative_high_card_goes_first():
    state = _after_setup()
    assert state.phase is Phase.INITIATIVE and state.is_chance_node()
    state.apply_text("white initiative 6S")
    state.apply_text("black initiative 4H")
    assert state.first is Side.WHITE and state.to_move is Side.WHITE
    assert state.phase is Phase.PRE_TURN_DRAW  # white's hand is empty: may draw one card


def test_example_2_movement_colours():
    state = _after_setup()
    state.apply_text("white initiative 6S")
    state.apply_text("black initiative 4H")
    state.apply_text("white take-draw")
    state.apply_text("white draw 3H")
    moves = [a for a in state.legal_actions() if a.verb.value == "move"]
    by_unit = {}
    for m in moves:
        by_unit.setdefault(m.frm, set()).add(m.to)
    # the knight on 10D cannot move with a red card
    assert parse_cell("a1") not in by_unit
    # the pawn on 2C reaches its 5 on-board neighbours (and may cover its own card)
    assert by_unit[parse_cell("c1")] == {parse_cell(c) for c in
                                         ("b1", "d1", "b2", "c2", "d2", "c1")}
    state.apply(parse_action("white move c1-c2 3H"))
    assert state.units[parse_cell("c2")].kind == "pawn"
    assert state.top(parse_cell("c2")).card.code == "3H"
    assert state.top(parse_cell("c2")).colour.value == "red"
    assert state.top(parse_cell("c1")).card.code == "2C"  # the old standing card stays


def _example_3():
    # Black's King on JS moves an 8D onto empty d3, next to Jon's Pawn (on 9C) and Knight (on 4C).
    state = position({"d4": ("JS", "black king"), "c3": ("9C", "white pawn"),
                      "d2": ("4C", "white knight"), "a1": ("2H", "white king"),
                      "g5": ("2S", "black pawn")},
                     to_move="black", initiative=("3D", "5S"),
                     hands={"white": [], "black": ["8D"]})
    state.apply_text("black move d4-d3 8D")
    return state


def test_example_3_attack_trumps_and_needed():
    state = _example_3()
    assert state.phase is Phase.ATTACK
    king, pawn, knight = parse_cell("d3"), parse_cell("c3"), parse_cell("d2")
    easy = resolve_attack(state, king, pawn, Style.EASY)
    assert [c.code for c in easy.trumps] == ["8D"] and easy.needed == 1 and easy.hit
    optimal = resolve_attack(state, king, pawn, Style.OPTIMAL)
    assert sorted(c.code for c in optimal.trumps) == ["3D", "5S", "9C"]
    on_knight = resolve_attack(state, king, knight, Style.OPTIMAL)
    assert sorted(c.code for c in on_knight.trumps) == ["3D", "5S"] and on_knight.needed == 2


def test_example_4_damage_after_armor():
    state = _example_3()
    state.apply_text("black attack c3 optimal")
    pawn = state.units[parse_cell("c3")]
    assert pawn.injury == 2 and pawn.life_left == 6  # 5 - 3 armor; life 8, stays


def test_example_5_key_position_side_to_side_with_spades():
    state = _example_3()
    result = resolve_attack(state, parse_cell("d3"), parse_cell("c3"), Style.OPTIMAL)
    assert result.key_position.value == "side-to-side" and result.key and result.draws == 2
    state.apply_text("black attack c3 optimal")
    assert state.is_chance_node()  # two post-turn draws
    state.apply_text("black draw 2D")
    state.apply_text("black draw 3D")
    assert [c.code for c in state.players[Side.BLACK].hand] == ["2D", "3D"]
    # the head-to-head knight would not have been key with a spade
    other = _example_3()
    assert not resolve_attack(other, parse_cell("d3"), parse_cell("d2"), Style.OPTIMAL).key


def test_example_6_mystic_blast_from_a_joker():
    # White's Queen on QC at e2; black King on an Ace at d3 (digit diagonal of the joker).
    state = position({"e2": ("QC", "white queen"), "d3": ("AH", "black king"),
                      "a5": ("7D", "black rook"), "g5": ("6S", "black knight"),
                      "b5": ("5H", "black pawn"), "a1": ("2C", "white pawn")},
                     to_move="white", initiative=("4H", "9S"),
                     hands={"white": ["JK"], "black": []})
    state.apply_text("white move e2-e2 JK")  # the joker covers the queen's own card
    result = resolve_attack(state, parse_cell("e2"), parse_cell("d3"), Style.ADVANTAGE)
    assert sorted(c.code for c in result.trumps) == ["AH", "JK"]
    assert result.needed == 2 and result.hit and not result.critical
    damage = {state.units[e.cell].kind: e.damage for e in result.effects}
    # 6 in all: the King takes 5; the other units on red cards take 6 less their own armor
    assert damage == {"king": 5, "rook": 4, "pawn": 3}
    assert result.key_position.value == "digit-diagonal" and not result.key  # hearts: head to head
