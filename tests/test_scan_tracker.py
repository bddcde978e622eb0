"""The tracker on synthetic readings of whole recorded games."""

import itertools

import pytest

from engines.royal_battles import CELL_NAMES, Side
from engines.royal_battles.board import NEIGHBOURS, parse_cell
from engines.royal_battles.position import to_json
from engines.royal_battles.selfplay import record_game
from scanner.detections import PieceReading
from scanner.table_events import twin_of, with_card
from scanner.tracker import GameTracker, replay_journal
from tests.tracker_sim import frames_of, reading_of, truth_events


def _empty(steps):
    first = steps[0][1]
    return {"board": {}, "initiative": {"white": None, "black": None}, **{
        k: v for k, v in first.items() if k not in ("board", "initiative")}}


def _track(steps, seed, edit=None, **kw):
    """A tracker fed a recorded game's frames, each first changed by `edit(frame)` if given
    (what a real scanner got wrong)."""
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in frames_of(steps, _empty(steps), seed=seed, **kw):
        if edit is not None:
            edit(frame)
        tracker.update(frame)
    return tracker


def _run(seed, **kw):
    steps = record_game(seed)
    return steps, _track(steps, seed, **kw)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_all_moves_recovered_in_order_with_perfect_readings(seed):
    steps, tracker = _run(seed)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


@pytest.mark.parametrize("seed", [6, 7])
def test_unsure_cells_delay_but_never_invent_events(seed):
    steps, tracker = _run(seed, unsure_rate=0.05, settle=6)
    got = [e.text for e in tracker.events]
    want = truth_events(steps)
    assert got == want[:len(got)]  # never a spurious or reordered event
    assert len(got) >= 0.9 * len(want)


def test_occluded_frames_never_become_state():
    steps = record_game(3)
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    tracker = GameTracker(armies)
    pos = steps[0][1]
    for i in range(20):  # a set-up card seen only while hands are over the board
        tracker.update(reading_of(pos, i, occluded=True))
    assert tracker.events == []


def _set_up_card_seen(frames: int, unread: bool = False) -> GameTracker:
    """A tracker shown the empty table, then white's first set-up card for `frames` settled
    frames (read surely, or `unread`: a card there the reader can't name), then the empty
    table again."""
    steps = record_game(3)
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    tracker = GameTracker(armies)
    empty = _empty(steps)
    cell, code = steps[0][0].split()[2:4]  # "white setup a1 7H"
    for i in range(5):
        tracker.update(reading_of(empty, i))
    for i in range(5, 5 + frames):
        frame = reading_of(steps[0][1], i)
        if unread:
            assert _blur_card(frame, cell, code, [(code, 0.5), ("JK", 0.5)])
        tracker.update(frame)
    for i in range(5 + frames, 12 + frames):
        tracker.update(reading_of(empty, i))
    return tracker


def test_a_flicker_shorter_than_the_settle_time_is_ignored():
    assert _set_up_card_seen(1).events == []  # one frame shows a card, then it's gone
    assert _set_up_card_seen(2, unread=True).events == []  # two of a card it can't name


def test_a_card_the_reader_names_is_believed_a_settled_frame_sooner():
    """A card read surely is believed after SETTLE_FRAMES - 1 settled frames in a row, one the
    reader can't name after SETTLE_FRAMES (session 31: the tracked game showed the table right
    on a fifth more of the validation games' settled frames, with no more spurious events)."""
    from scanner.tracker import SETTLE_FRAMES

    seen = _set_up_card_seen(SETTLE_FRAMES - 1)
    assert [e.kind for e in seen.events] == ["setup"]
    assert _set_up_card_seen(SETTLE_FRAMES - 1, unread=True).events == []
    # (read 50/50 as itself or a joker, which a set-up card can't be)
    assert [e.kind for e in _set_up_card_seen(SETTLE_FRAMES, unread=True).events] == ["setup"]


def test_an_illegal_reading_is_held_with_the_reason():
    steps = record_game(3)
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    tracker = GameTracker(armies)
    bad = _empty(steps)
    bad = {**bad, "board": {"a1": {"cards": ["AS"]}}}  # aces are never laid at set-up
    for i in range(6):
        tracker.update(reading_of(bad, i))
    assert tracker.events == []
    assert "shuffled back" in tracker.holding
    tracker.confirm(steps[0][0])
    assert [e.text for e in tracker.events] == [steps[0][0]]


def test_removed_unit_without_recorded_damage_is_flagged():
    steps, tracker = _run(2)
    removed = [e for e in tracker.events if e.kind == "removed"]
    truth_removed = [t for t in truth_events(steps) if " removed " in t]
    assert len(removed) == len(truth_removed)
    assert all(e.flags and "injury" in e.flags[0] for e in removed if e.flags)


def test_event_log_saves_and_replays_into_the_engine():
    import json

    _steps, tracker = _run(2)
    log = json.loads(json.dumps(tracker.log_json()))
    assert log["events"] and log["journal"]
    assert to_json(replay_journal(log)) == to_json(tracker.state)


def test_armies_are_inferred_from_the_units_placed():
    steps = record_game(4)
    armies = {Side(k): sorted(v) for k, v in steps[0][1]["armies"].items()}
    tracker = GameTracker()  # no armies given
    for frame in frames_of(steps[:40], _empty(steps), seed=4):
        tracker.update(frame)
    assert {s: sorted(a) for s, a in tracker.armies.items()} == armies
    assert [e.text for e in tracker.events] == truth_events(steps[:40])


# --- cards the reader could not name alone ------------------------------------------------

TWIN_OTHER_COLOUR = {"H": "S", "S": "H", "D": "C", "C": "D"}
TWIN_SAME_COLOUR = {"H": "D", "D": "H", "S": "C", "C": "S"}


def _first_move(steps):
    for i, (action, _pos) in enumerate(steps):
        words = action.split()
        if words[1] == "move" and words[3] != "JK":
            return i, words[2].split("-")[1], words[3]
    raise AssertionError("no move")


def _blur_card(frame, cell, code, candidates, confidence=None) -> bool:
    """On a settled frame, the card `code` on `cell` read unsure with these candidates (as a
    camera gives); True where it was."""
    from scanner.detections import CardReading

    c = frame.cells.get(cell)
    if c is None or c.card is None or c.card.card != code or frame.occluded:
        return False
    c.card = CardReading(card=None, candidates=candidates,
                         confidence=candidates[0][1] if confidence is None else confidence)
    return True


def _blur_initiative(frame, side, code, candidates) -> bool:
    """The same for the card `code` on `side`'s initiative pile (found, so with corners)."""
    import numpy as np

    from scanner.detections import CardReading

    init = frame.initiative.get(side)
    if init is None or init.card != code or frame.occluded:
        return False
    frame.initiative[side] = CardReading(corners=np.zeros((4, 2), np.float32), card=None,
                                         confidence=candidates[0][1], candidates=candidates)
    return True


def test_a_joker_read_as_a_jack_gives_way_to_the_joker_when_that_jack_turns_up():
    """White's joker covering e2 reads as JS at 95 % whenever seen (s31: the tango joker's "J"
    over "oker"); white's JS is laid later and read sure. The rules refuse JS twice, and
    white's JC (its twin) turned up before: the joker is what the reader is known to take for
    a jack, so the question on e2 goes on with it."""
    seed = 3
    steps = record_game(seed)
    assert steps[37][0] == "white move e2-e2 JK" and steps[66][0] == "white move c1-b2 JS"
    assert any(a.startswith("white") and a.endswith(" JC") for a, _ in steps[:66])
    tracker = _track(steps[:67], seed,
                     lambda frame: _blur_card(frame, "e2", "JK", [("JS", 0.95)]))
    assert [e.text for e in tracker.events] == truth_events(steps[:67]), tracker.holding
    joker = next(e for e in tracker.events if e.text == "white move e2-e2 JK")
    assert joker.question and "goes on with JK" in " ".join(
        f for e in tracker.events for f in e.flags)


def _round_won_by_its_second_drawer():
    """A recorded game with a round in which the side that drew second won the initiative and
    both sides moved: the game, that side, its card, a card that would have lost to the other
    side's (never turned up by its deck), and the step of the other side's move."""
    from engines.royal_battles.cards import parse_card

    for seed, steps, acts, first, second, moves in _rounds_won_by_the_second_drawer():
        used = {a.split()[-1] for a in acts if a.startswith(second[0])}
        other = parse_card(first[2]).initiative_key()
        lower = next((c for c in ("2C", "2D", "2H", "2S", "3C", "3D") if c not in used
                      and parse_card(c).initiative_key() < other), None)
        if lower:
            return seed, steps, second[0], second[2], lower, moves[1]
    raise AssertionError("no such round")


def _rounds_won_by_the_second_drawer():
    """Each round of the recorded games (seeds 1-39) that the side drawing its initiative
    card second won, both sides moving and no joker drawn: (seed, steps, actions, the first
    and second initiative actions split into words, the steps of the two moves)."""
    for seed in range(1, 40):
        steps = record_game(seed)
        acts = [a for a, _ in steps]
        for i in range(1, len(acts)):
            first, second = acts[i - 1].split(), acts[i].split()
            if first[1] != "initiative" or second[1] != "initiative" or first[0] == second[0]:
                continue
            moves = []
            for j in range(i + 1, len(acts)):
                if acts[j].split()[1] == "initiative":
                    break
                if acts[j].split()[1] == "move":
                    moves.append(j)
            sides = [acts[j].split()[0] for j in moves]
            if len(moves) != 2 or sides != [second[0], first[0]] or "JK" in (first[2], second[2]):
                continue
            yield seed, steps, acts, first, second, moves


def test_a_move_after_the_round_seemed_over_makes_the_other_side_the_initiative_winner():
    """The second drawer's winning card is read likelier as a card that loses (74 %): the game
    goes on as if the other side had won and passed. When the other side then moves too, with
    no new initiative card, the round was not over: the winning card is the likeliest that
    makes it so, still asked, and every move stands in order (session 18, s64)."""
    seed, steps, side, card, lower, end = _round_won_by_its_second_drawer()

    def edit(frame):
        _blur_initiative(frame, side, card, [(lower, 0.74), (card, 0.2)])

    tracker = _track(steps[:end + 1], seed, edit)
    want = truth_events(steps[:end + 1])
    texts = [e.text for e in tracker.events]
    assert texts == want, tracker.holding
    asked = next(e for e in tracker.events if e.text == f"{side} initiative {card}")
    assert asked.question and any(f"{side} moved first in this round" in f
                                  for f in asked.flags)
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


def test_an_initiative_card_taken_on_the_rules_word_gives_way_to_the_order_of_play():
    """The same, with the winning card read as the losing one at 99.7 % (v6-s263: white's QC
    read JC 99.7 %, JS 0.2 %, QC 0.04 %, against black's JS): taken on the rules' word and
    watched, not asked. When the other side moves after the round seemed over, the order of
    play outweighs the read: the pile's card is the likeliest that makes it so, now asked.
    (Until session 35 a watched card was not reconsidered, and the moves after it went into
    the wrong rounds: the game recovered 63 of 97 moves with 26 spurious events.)"""
    seed, steps, side, card, lower, end = _round_won_by_its_second_drawer()

    def edit(frame):
        _blur_initiative(frame, side, card, [(lower, 0.997), (card, 0.002)])

    tracker = _track(steps[:end + 1], seed, edit)
    assert [e.text for e in tracker.events] == truth_events(steps[:end + 1]), tracker.holding
    asked = next(e for e in tracker.events if e.text == f"{side} initiative {card}")
    assert asked.question and any(f"{side} moved first in this round" in f
                                  for f in asked.flags)
    assert any(f"{side}'s initiative pile? going on with {card}" in q
               for q in tracker.open_questions())
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


def _a_tie_read_where_the_second_drawer_won():
    """A recorded game with a round the second drawer won and both sides moved, whose deck
    had not turned up the first drawer's card before: the game, that side, its card, the
    first drawer's card, and the step of the other side's move."""
    for seed, steps, acts, first, second, moves in _rounds_won_by_the_second_drawer():
        used = {a.split()[-1] for a in acts[:moves[1] + 1] if a.startswith(second[0])}
        if first[2] not in used:
            return seed, steps, second[0], second[2], first[2], moves[1]
    raise AssertionError("no such round")


def test_a_tie_read_sure_gives_way_to_the_order_of_play():
    """v7-s313: black's KD read JD (79 %, KD 21 %), sure, against white's JD: the very same
    card, a tie, and the engine waited for both sides to draw again; black's move came
    instead, and the rounds went out of step (61 of 93 moves, 25 spurious events). A tie read
    whose reads named another card is watched: the move seen where new cards were due turns
    it to that card, now asked."""
    import numpy as np

    from scanner.detections import CardReading

    seed, steps, side, card, tie, end = _a_tie_read_where_the_second_drawer_won()

    def edit(frame):
        pile = frame.initiative.get(side)
        if pile is not None and pile.card == card and not frame.occluded:
            frame.initiative[side] = CardReading(
                corners=np.zeros((4, 2), np.float32), card=tie, confidence=0.99,
                candidates=[(tie, 0.79), (card, 0.21)])

    tracker = _track(steps[:end + 1], seed, edit)
    assert [e.text for e in tracker.events] == truth_events(steps[:end + 1]), tracker.holding
    asked = next(e for e in tracker.events if e.text == f"{side} initiative {card}")
    assert asked.question and any(f"not {tie}" in f for f in asked.flags)
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


def _blurred_run(seed, twin_of, p_true=0.48, p_twin=0.48, upto_move=False, blurred_reads=None):
    """A game read perfectly, except the first movement card: from the frame it is laid on,
    every read (or the first `blurred_reads`) is unsure between it and a twin (fresh
    readings, as a camera gives)."""

    steps = record_game(seed)
    i, cell, code = _first_move(steps)
    twin = code[:-1] + twin_of[code[-1]]
    third = ("2" if code[:-1] != "2" else "3") + code[-1]
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    tracker = GameTracker(armies)
    blurred = 0
    for frame in frames_of(steps[:i + 1] if upto_move else steps, _empty(steps), seed=seed):
        if blurred_reads is None or blurred < blurred_reads:
            blurred += _blur_card(frame, cell, code,
                                  [(code, p_true), (twin, p_twin), (third, 0.02)], 0.4)
        tracker.update(frame)
    return steps, tracker, code, twin


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_colour_rule_picks_between_two_readings(seed):
    steps, tracker, code, _twin = _blurred_run(seed, TWIN_OTHER_COLOUR)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding
    move = next(e for e in tracker.events if e.kind == "move")
    assert code in move.text and any("read as" in f for f in move.flags)


def _seen(tracker):
    """The events a tracker asserts: open questions are not claims."""
    return [e.text for e in tracker.events if e.question is None]


@pytest.mark.parametrize("seed", [2, 3])  # games where the twin is still in the deck
def test_a_reading_the_rules_cannot_settle_is_an_open_question(seed):
    steps, tracker, code, twin = _blurred_run(seed, TWIN_SAME_COLOUR, p_true=0.55,
                                              p_twin=0.42, upto_move=True)
    i, _cell, _code = _first_move(steps)
    want = truth_events(steps[:i + 1])
    move = next(e for e in tracker.events if e.kind == "move")
    assert _seen(tracker) == want[:-1]  # everything else asserted, nothing invented
    assert move.question and code in move.question and twin in move.question
    assert len(tracker.open_questions()) == 1 and tracker.holding is None
    tracker.confirm(steps[i][0])  # a player says which: the question closes, right
    assert move.question is None and move.text == steps[i][0]
    assert _seen(tracker) == want and not tracker.open_questions()


def test_a_card_too_unsure_to_go_on_with_is_held_with_the_guesses():
    # 48 % / 48 %: no lead, and the table shows nothing after that move
    steps, tracker, code, twin = _blurred_run(3, TWIN_SAME_COLOUR, upto_move=True)
    got = [e.text for e in tracker.events]
    assert got == truth_events(steps)[:len(got)]  # nothing invented after the held card
    assert not any(e.kind == "move" for e in tracker.events)
    assert "which card lies on" in tracker.holding and code in tracker.holding


def test_once_the_table_moves_on_a_held_card_is_an_open_question():
    """The same card, and the game goes on: the held move is taken with its likeliest legal
    reading as an open question (the players can still answer it), and every later event is
    read, where the hold used to stall the rest of the game."""
    steps, tracker, code, twin = _blurred_run(3, TWIN_SAME_COLOUR)
    i, _cell, _code = _first_move(steps)
    asked = [e for e in tracker.events if e.question]
    assert len(asked) == 1 and asked[0].kind == "move"
    assert code in asked[0].question and twin in asked[0].question
    assert _seen(tracker) == [w for w in truth_events(steps) if w != steps[i][0]]
    assert tracker.holding is None
    tracker.confirm(steps[i][0])  # a player says which
    assert _seen(tracker) == truth_events(steps) and not tracker.open_questions()


def test_while_a_card_is_in_question_the_game_goes_on():
    steps, tracker, code, twin = _blurred_run(3, TWIN_SAME_COLOUR, p_true=0.55, p_twin=0.42)
    want = truth_events(steps)  # the whole game went on
    i, _cell, _code = _first_move(steps)
    asked = [e for e in tracker.events if e.question]
    assert len(asked) == 1 and code in asked[0].question
    assert _seen(tracker) == [w for w in want if w != steps[i][0]]  # every other event


@pytest.mark.parametrize("seed", [2, 6, 7])
def test_a_card_in_question_is_settled_by_later_looks(seed):
    """Read unsure (and likelier its twin) when laid, then clearly: the game went on with
    the twin, and the later looks write the right card back into the log and the engine."""
    steps, tracker, code, twin = _blurred_run(seed, TWIN_SAME_COLOUR, p_true=0.3,
                                              p_twin=0.6, blurred_reads=6)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.open_questions()
    move = next(e for e in tracker.events if e.kind == "move")
    assert any("settled on later looks" in f and twin in f for f in move.flags)
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


@pytest.mark.parametrize("seed", [1, 5, 8])  # the twin was already laid by that side
def test_a_card_already_seen_is_ruled_out(seed):
    steps, tracker, _code, _twin = _blurred_run(seed, TWIN_SAME_COLOUR)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


def test_evidence_is_averaged_not_multiplied():
    from scanner.observations import CardEvidence

    e = CardEvidence()
    for _ in range(10):  # ten looks at the same pixels
        e.add([("7H", 0.6), ("7D", 0.3)])
    ranked = dict(e.ranked())
    assert 0.55 < ranked["7H"] < 0.65 and 0.25 < ranked["7D"] < 0.35
    red_sevens_ruled_out = dict(e.ranked(lambda c: c != "7D"))
    assert red_sevens_ruled_out["7H"] > 0.8


def test_evidence_ranked_follows_every_new_read_and_look():
    """`ranked` keeps its scores between reads (the tracker asks it thousands of times a
    game): every read, new look and copy must still show in what it says next."""
    from scanner.observations import CardEvidence

    def fresh(reads_by_look):
        e = CardEvidence()
        for reads in reads_by_look:
            e.new_look()
            for r in reads:
                e.add(r)
        return e.ranked()

    e = CardEvidence()
    e.add([("7H", 0.6), ("7D", 0.3)])
    first = e.ranked()
    e.add([("7D", 0.9)])
    assert e.ranked() != first and e.ranked() == fresh([[[("7H", 0.6), ("7D", 0.3)],
                                                         [("7D", 0.9)]]])
    twin = e.copy()
    e.new_look()
    e.add([("8S", 0.99)])
    assert e.ranked()[0][0] == "8S" and twin.ranked()[0][0] == "7D"
    assert e.ranked() == fresh([[[("7H", 0.6), ("7D", 0.3)], [("7D", 0.9)]], [[("8S", 0.99)]]])
    assert e.ranked(lambda c: c != "8S")[0][0] == "7D"
    assert CardEvidence().ranked() == []


@pytest.mark.parametrize("seed", [1, 2])
def test_after_set_up_a_misread_kind_does_not_derail_the_game(seed):
    """The piece classifier's weakest answer is the kind: once placed, a unit is followed by
    its side and the engine knows what it is."""
    import random

    steps = record_game(seed)
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    tracker = GameTracker(armies)
    rng = random.Random(seed)
    kinds = ["pawn", "knight", "bishop", "rook", "queen", "king"]
    for frame in frames_of(steps, _empty(steps), seed=seed):
        if tracker.state.phase.value not in ("setup", "place"):
            for cell in frame.cells.values():
                p = cell.piece
                if p is not None and p.piece not in (None, "empty"):
                    p.piece = f"{p.piece.split('-')[0]}-{rng.choice(kinds)}"
        tracker.update(frame)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


def test_the_last_unit_placed_takes_the_kind_the_army_has_left():
    steps = record_game(2)
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    places = [a for a, _ in steps if a.split()[1] == "place" and a.startswith("white")]
    last_cell = places[-1].split()[3]
    absent = next(k for k in ("queen", "king", "rook", "knight", "bishop", "pawn")
                  if k not in armies[Side.WHITE])
    tracker = GameTracker(armies)
    for frame in frames_of(steps, _empty(steps), seed=2):
        p = frame.cells[last_cell].piece
        if p is not None and p.piece and p.piece.startswith("white-") \
                and tracker.state.phase.value == "place":
            p.piece = f"white-{absent}"  # the classifier names a kind this army lacks
        tracker.update(frame)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding
    placed = next(e for e in tracker.events if e.text == places[-1])
    assert placed.flags and absent in placed.flags[0]


def test_a_unit_of_no_colour_on_a_set_up_card_is_the_side_that_places_there():
    """The classifier sees a cell occupied but says neither colour nor kind (a held-out set):
    while units are placed, a unit on white's set-up card is white's, and the army's kinds
    decide which; the game is not held at placement."""
    from scanner.detections import PieceReading

    steps = record_game(2)
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    places = [a for a, _ in steps if a.split()[1] == "place" and a.startswith("white")]
    cell = places[-1].split()[3]
    tracker = GameTracker(armies)
    for frame in frames_of(steps, _empty(steps), seed=2):
        p = frame.cells[cell].piece
        if p is not None and p.piece and p.piece.startswith("white-") \
                and tracker.state.phase.value == "place":
            frame.cells[cell].piece = PieceReading(None, 0.99, occupied=True)
        tracker.update(frame)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


@pytest.mark.parametrize("p_true,placed", [(0.95, True), (0.5, False)])
def test_units_whose_kinds_are_unsure_are_placed_from_the_army_jointly(p_true, placed):
    """Two white units read with unsure kinds: the army (and the other units, read well)
    leave two ways to assign them; the kind probabilities decide, or the tracker holds."""
    from scanner.detections import PieceReading

    steps = record_game(3)  # white's army: rook, queen, queen, rook
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    places = [a.split() for a, _ in steps if a.split()[1] == "place" and a.startswith("white")]
    (_, _, k1, c1), (_, _, k2, c2) = next(
        (p, q) for p in places for q in places if p[2] != q[2])  # a rook and a queen
    blurred = {c1: k1, c2: k2}
    n_setup = next(i for i, (a, _) in enumerate(steps) if a.split()[1] == "initiative")
    tracker = GameTracker(armies)
    for frame in frames_of(steps[:n_setup], _empty(steps), seed=3):
        for cell, kind in blurred.items():
            p = frame.cells[cell].piece
            if p is not None and p.piece and p.piece.startswith("white"):
                other = k2 if kind == k1 else k1
                frame.cells[cell].piece = PieceReading(
                    None, 0.9, occupied=True, seen_side="white",
                    kinds=[(kind, p_true), (other, 1 - p_true)])
        tracker.update(frame)
    got = [e for e in tracker.events if e.kind == "place"]
    if placed:
        assert [e.text for e in tracker.events] == truth_events(steps[:n_setup])
        assert all(any("check it" in f for f in e.flags) for e in got
                   if e.text.split()[-1] in blurred)
    else:  # never a guess: the likeliest stands in, asked as an open question, on the two
        # units in doubt only (the army's other rook and queen were read well)
        asked = [e for e in got if e.question]
        assert {e.text.split()[-1] for e in asked} == {c1, c2}
        assert c1 in asked[0].question and "stands where" in asked[0].question
        assert _seen(tracker) == [w for w in truth_events(steps[:n_setup])
                                  if w.split()[-1] not in (c1, c2) or "place" not in w]


def _set_up_leaning_the_wrong_way(steps, upto, after_set_up=False, lean=0.6):
    """Track steps[:upto] with two of white's units of different kinds read `lean` (60/40) the
    wrong way round while the armies are set up (and after, if `after_set_up`). Returns the
    tracker and (kind, cell) of each."""
    from scanner.detections import PieceReading

    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    places = [a.split() for a, _ in steps if a.split()[1] == "place" and a.startswith("white")]
    (_, _, k1, c1), (_, _, k2, c2) = next(
        (p, q) for p in places for q in places if p[2] != q[2])
    tracker = GameTracker(armies)
    for frame in frames_of(steps[:upto], _empty(steps), seed=3):
        if after_set_up or tracker.state.phase.value in ("setup", "place"):
            for cell, kind in {c1: k2, c2: k1}.items():
                p = frame.cells[cell].piece
                if p is not None and p.piece and p.piece.startswith("white"):
                    frame.cells[cell].piece = PieceReading(
                        None, 0.9, occupied=True, seen_side="white",
                        kinds=[(kind, lean), (k1 if kind == k2 else k2, 1 - lean)])
        tracker.update(frame)
    return tracker, (k1, c1), (k2, c2)


def test_units_placed_in_question_are_settled_by_their_later_views():
    """Set-up kinds read 50/50 between two cells; once the game goes on, each unit is seen
    from the cells it moves to, and the assignment is settled (and the log rewritten)."""
    steps = record_game(3)
    tracker, (k1, c1), (k2, c2) = _set_up_leaning_the_wrong_way(steps, len(steps))
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.open_questions()
    placed = [e for e in tracker.events if e.kind == "place" and e.text.startswith("white")]
    assert all(any("settled on later looks" in f for f in e.flags) for e in placed)
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


@pytest.mark.parametrize("seed", [3, 4])
def test_a_placement_taken_sure_is_rewritten_by_its_units_later_views(seed):
    """Two units read the wrong way round at set-up, sure of it (session 18: a held-out rook
    and queen): the placement is watched, and once the units have been seen from the cells
    they move to it is asked, then settled, and every event names the right kinds."""
    steps = record_game(seed)
    tracker, (k1, c1), (k2, c2) = _set_up_leaning_the_wrong_way(steps, len(steps), lean=0.99)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.open_questions()
    placed = [e for e in tracker.events if e.kind == "place" and e.text.startswith("white")]
    assert all(any("settled on later looks" in f for f in e.flags) for e in placed)
    assert tracker.open_questions() == []  # settled; black's sure placement still watched
    assert [q.side for q in tracker.questions] == [Side.BLACK] and tracker.questions[0].watched
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


@pytest.mark.parametrize("seed", [3, 7])
@pytest.mark.parametrize("step,ranged", [((1, 1), True), ((0, 1), False), ((0, 3), None)])
def test_a_removal_is_a_view_of_the_attacker_s_kind(seed, step, ranged):
    """A unit taken off after a move was hit by the mover: diagonally by a ranged unit or a
    pawn, orthogonally by a melee unit, from afar only by a queen's Mystic Blast."""
    from engines.royal_battles import CELL_NAMES
    from engines.royal_battles.units import UNIT_KINDS
    from scanner.open_questions import PlacementQuestion

    steps = record_game(seed)
    first_round = next(i for i, (a, _) in enumerate(steps) if a.split()[1] == "initiative")
    tracker, (_k1, c1), _ = _set_up_leaning_the_wrong_way(steps, first_round, True)
    q = next(q for q in tracker.questions if isinstance(q, PlacementQuestion))
    f, r = parse_cell(c1) % 7, parse_cell(c1) // 7  # (home rank: the board is above it)
    f = f + step[0] if f + step[0] < 7 else f - step[0]
    target = CELL_NAMES[(r + step[1]) * 7 + f]
    tracker.journal.append(f"white move {c1}-{c1} 2H")  # the last mover: the unit on c1
    before = len(q.views)
    tracker._attack_view(target, Side.BLACK)
    army = set(tracker.armies[Side.WHITE])
    could = {k for k in army if k == "queen" or ranged is not None and (
        k == "pawn" or UNIT_KINDS[k].ranged == ranged)}
    if not could or could == army:
        assert len(q.views) == before  # nothing to tell the kinds apart
        return
    (origin, _cell), (sums, n, _top) = list(q.views.items())[-1]
    assert origin == c1 and n == 1
    assert min(sums[k] for k in could) > max((sums[k] for k in army - could), default=0)


# --- what a real camera shows between two settled tables -----------------------------------

@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_standing_card_misread_in_its_own_colour_is_not_a_new_card(seed):
    """Every set-up card, once a unit stands on it, reads as another card of its colour (the
    piece hides the index). No card of the same colour can be laid over it, so the reads are
    the old card misread and the game is followed as with perfect readings."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    setup = {a.split()[2]: a.split()[3] for a, _ in steps if a.split()[1] == "setup"}
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    tracker = GameTracker(armies)
    for i, frame in enumerate(frames_of(steps, _empty(steps), seed=seed)):
        for cell, code in setup.items():
            c = frame.cells.get(cell)
            if c is None or c.card is None or c.card.card != code or code == "JK" \
                    or c.piece is None or c.piece.piece in (None, "empty"):
                continue
            twin = code[:-1] + TWIN_SAME_COLOUR[code[-1]]
            c.card = CardReading(card=twin if i % 2 else None, confidence=0.8,
                                 candidates=[(twin, 0.8), (code, 0.01), ("2" + code[-1], 0.1)])
        tracker.update(frame)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


def test_a_read_leaning_to_the_other_colour_is_news():
    from scanner.detections import CardReading
    from scanner.observations import UNREAD, card_value

    leaning = CardReading(card=None, confidence=0.6, candidates=[("9S", 0.6), ("8D", 0.3)])
    assert card_value(leaning, "8D") == UNREAD  # a black card may cover a red one
    assert card_value(CardReading(card=None, candidates=[("9D", 0.9)]), "8D") == "8D"
    # an initiative card may be laid over any card
    assert card_value(CardReading(card="9D", confidence=0.99), "8D", board=False) == "9D"
    assert card_value(CardReading(card=None, candidates=[("9D", 0.9)]), "JK") == UNREAD


def test_a_read_of_the_colour_naming_another_rank_and_the_other_colour_a_little_is_news():
    """v8-s349: black's AS laid in place over its JH, read AH 53 %, AD 35 %, AS 7 % under its
    bishop: the ranks say a new card, the colour rule that it is the other colour's."""
    from scanner.detections import CardReading
    from scanner.observations import UNREAD, card_value

    def read(*candidates):
        return CardReading(card=None, confidence=candidates[0][1], candidates=list(candidates))

    assert card_value(read(("AH", 0.53), ("AD", 0.35), ("AS", 0.07)), "JH") == UNREAD
    # the believed card's own rank, or its name, among the reads: the card itself misread
    assert card_value(read(("AH", 0.53), ("JD", 0.35), ("AS", 0.07)), "JH") == "JH"
    assert card_value(read(("AH", 0.53), ("JH", 0.35), ("AS", 0.07)), "JH") == "JH"
    # nothing of the other colour (v12-s487: a 4S under a bishop read 5S 52 %, KS, 9S)
    assert card_value(read(("5S", 0.52), ("KS", 0.13), ("9S", 0.11)), "4S") == "4S"


def _piles_changed(frame, piles: dict) -> set[str]:
    """The initiative piles ("init/white") whose card differs from the last frame's in `piles`
    (updated): a new initiative card changes its pile's picture, and the scanner sees that."""
    now = {f"init/{side}": p.card if p else None for side, p in frame.initiative.items()}
    changed = {zone for zone in now if now[zone] != piles.get(zone)}
    piles.update(now)
    return changed


def _in_place_moves_read_unsure(seed: int, lean: float = 0.88):
    """Frames of a game as the incremental scanner gives them when a card laid in place (a
    unit laying its movement card on its own cell) changes the cell's picture too little to
    be called changed: no cell is ever in `changed` (only a pile given a new card), and each
    card laid in place reads unsure, leaning `lean` to itself, as long as its unit stands on it
    (v10-s399). Not over or as a joker: a joker has no colour, and an unsure read of one is no
    news (the rule's limit)."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    laid_in_place = set()  # (cell, card) of the cards laid in place over a card of a colour
    for action, pos in steps:
        w = action.split()
        if w[1] == "move" and w[2].split("-")[0] == w[2].split("-")[1] \
                and "JK" not in pos["board"][w[2][:2]]["cards"][-2:]:
            laid_in_place.add((w[2][:2], w[3]))
    frames = frames_of(steps, _empty(steps), seed=seed)
    piles: dict[str, object] = {}
    for frame in frames:
        frame.changed = _piles_changed(frame, piles)
        for cell, code in laid_in_place:
            c = frame.cells.get(cell)
            if c is not None and c.card is not None and c.card.card == code \
                    and c.piece is not None and c.piece.piece not in (None, "empty"):
                other = "2" + TWIN_SAME_COLOUR[code[-1]]
                c.card = CardReading(card=None, confidence=lean,
                                     candidates=[(code, lean), (other, 1 - lean)])
    return steps, laid_in_place, frames


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_card_laid_in_place_unchanged_to_the_scanner_is_news_when_it_leans_to_the_other_colour(
        seed, monkeypatch):
    """A card laid over another differs from it in colour: a read leaning to the other colour
    is news even where the scanner saw the place unchanged, which otherwise marks an unsure
    read of an agreed card as that card misread (v10-s399: a queen's 6D laid over its 3S)."""
    from scanner import tracker_misreads

    steps, laid, frames = _in_place_moves_read_unsure(seed)
    assert laid, "the game has a move in place"
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    tracker = GameTracker(armies)
    for frame in frames:
        tracker.update(frame)
    events, truth = [e.text for e in tracker.events], truth_events(steps)
    assert events == truth[:len(events)], tracker.holding
    # the game may end on a card laid in place that no later look has settled: asked, not
    # guessed
    held = truth[len(events):]
    assert not held or (len(held) == 1 and f"lies on {held[0].split()[2][:2]}?"
                        in (tracker.holding or "")), (held, tracker.holding)
    # without the colour's word the in-place card is the old one misread, and the game stalls
    monkeypatch.setattr(tracker_misreads, "_leans_to_the_other_colour", lambda *_: False)
    tracker = GameTracker(armies)
    for frame in _in_place_moves_read_unsure(seed)[2]:
        tracker.update(frame)
    assert [e.text for e in tracker.events] != truth_events(steps)


def test_a_read_leaning_to_courts_over_a_number_card_may_be_a_joker():
    from scanner.detections import CardReading
    from scanner.observations import UNREAD, card_value

    # v6-s277: an orell joker laid over a 5S, read as black courts and nothing on the 5S
    courts = CardReading(card=None, confidence=0.76,
                         candidates=[("JS", 0.46), ("JC", 0.24), ("KS", 0.10)])
    assert card_value(courts, "5S") == UNREAD
    # a piece hiding part of the card: its rank misread, its colour kept
    assert card_value(CardReading(card=None, candidates=[("7S", 0.5), ("4S", 0.3)]),
                      "5S") == "5S"
    # a court card misread as another court, or courts with some weight on the card itself
    assert card_value(courts, "QS") == "QS"
    backed = CardReading(card=None, candidates=[("JS", 0.46), ("JC", 0.24), ("5S", 0.2)])
    assert card_value(backed, "5S") == "5S"


def _a_move_beside_another_unit(seed: int):
    """The first move A-B of a seeded game with another unit of the mover's side next to B,
    standing on a card of the movement card's colour (so the card could not have been laid
    from there); frames where, for 40 frames from that move, A is still read occupied by the
    mover's side and the unit on B is read with its side only (no kind), as a piece left
    behind in the reads and an unsure kind make it (s64). None where the game has no such
    move."""
    def colour(code):
        return None if code == "JK" else ("red" if code[-1] in "HD" else "black")

    steps = record_game(seed)
    for i, (action, _pos) in enumerate(steps):
        w = action.split()
        if w[1] != "move" or w[3] == "JK":
            continue
        frm, to = w[2].split("-")
        before = steps[i - 1][1]["board"]
        if frm == to or colour(before[frm]["cards"][-1]) is None:
            continue
        beside = [CELL_NAMES[c] for c in NEIGHBOURS[parse_cell(to)]
                  if CELL_NAMES[c] != frm and (e := before.get(CELL_NAMES[c]))
                  and e.get("unit") and e["unit"]["side"] == w[0]
                  and colour(e["cards"][-1]) == colour(w[3])]
        if beside:
            break
    else:
        return None
    frames = frames_of(steps, _empty(steps), seed=seed)
    moved_at = None
    for frame in frames:
        cell = frame.cells.get(to)
        if moved_at is None and cell is not None and cell.card is not None \
                and cell.card.card == w[3] and not frame.occluded:
            moved_at = frame.frame_index
        if moved_at is not None and frame.frame_index < moved_at + 40 and not frame.occluded:
            left = frame.cells[frm]
            if left.piece is not None and left.piece.piece == "empty":
                left.piece = PieceReading(f"{w[0]}-{before[frm]['unit']['kind']}", 0.99)
            frame.cells[to].piece = PieceReading(None, 0.9, occupied=True, seen_side=w[0])
    return steps, action, frames


@pytest.mark.parametrize("seed", [2, 3, 5])
def test_of_two_units_beside_a_move_the_one_the_card_could_come_from_moved(seed,
                                                                             monkeypatch):
    """Where no unit next to a move's card is seen gone and its kind is not read, the cell
    from which the rules allow the card read is the one the unit left (s64: the king's
    a5-b4 with a 5D was taken for the queen's from b5, where a 5D can't be laid)."""
    from scanner import tracker_moves

    steps, move, frames = _a_move_beside_another_unit(seed)
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}

    def events():
        tracker = GameTracker(armies)
        for frame in frames:
            tracker.update(frame)
        return [e.text for e in tracker.events]

    assert move in events()
    monkeypatch.setattr(tracker_moves.MoveReading, "_card_fits",
                        lambda self, sources, *_: sources)
    assert move not in events()


def test_a_court_leaning_read_still_backing_the_believed_joker_is_that_joker():
    from scanner.detections import CardReading
    from scanner.observations import UNREAD, card_value

    # v7-s283: a berlin joker under a black knight
    misread = CardReading(card=None, confidence=0.58,
                          candidates=[("JC", 0.58), ("JK", 0.34), ("QC", 0.05)])
    assert card_value(misread, "JK") == "JK"
    # a court laid over the joker hides it: the joker is given next to nothing
    covered = CardReading(card=None, candidates=[("JC", 0.58), ("QC", 0.4), ("JK", 0.01)])
    assert card_value(covered, "JK") == UNREAD
    # a number card is no joker's picture
    assert card_value(CardReading(card=None, candidates=[("9C", 0.6), ("JK", 0.3)]),
                      "JK") == UNREAD
    # an initiative pile takes any card over a joker
    assert card_value(misread, "JK", board=False) == UNREAD


def _moves_seen_in_steps(steps):
    """Frames of a game where every unit moving to another cell is seen as a real camera sees a
    flat token: its card laid first, then the unit gone from its cell a few frames before it
    is seen on the new card (the new cell is re-read later than the old one)."""
    import copy

    frames: list = []
    last = _empty(steps)

    def show(pos, n, occluded=False):
        for _ in range(n):
            frames.append(reading_of(pos, len(frames), occluded=occluded))

    show(last, 4)
    for action, pos in steps:
        words = action.split()
        if words[1] not in ("setup", "place", "initiative", "move", "attack"):
            last = pos
            continue
        if words[1] == "move" and words[2].split("-")[0] != words[2].split("-")[1]:
            frm, to = words[2].split("-")
            card_first = copy.deepcopy(last)
            card_first["board"][to] = {"cards": pos["board"][to]["cards"]}
            show(last, 2, occluded=True)
            show(card_first, 4)
            unit_gone = copy.deepcopy(card_first)
            unit_gone["board"][frm] = {"cards": last["board"][frm]["cards"]}
            show(card_first, 2, occluded=True)
            show(unit_gone, 5)
            show(pos, 4)
        else:
            show(last, 2, occluded=True)
            show(pos, 4)
        last = pos
    return frames


def _gone_before_its_card_is_seen(steps, unread_frames: int = 20, last_unit: bool = False,
                                  as_a_token: bool = False):
    """Frames of a game where one move, a unit's to another cell right after the enemy's
    move next door (the engine then in the enemy's attack, which could have reached it), is
    seen as v9-s379's paper king was: the unit gone from its cell for five settled frames
    before the card it went onto is seen, and its piece never read on that card (unsure) for
    `unread_frames` frames. `last_unit`: only a move of its side's last unit. `as_a_token`:
    as that king's token hid its card there, the piece reads empty (76 %, not firmly) and
    the card unsure (95 %, its twin 5 %). Returns the frames and the move."""
    import copy

    from scanner.detections import CardReading

    frames: list = []
    last = _empty(steps)
    chosen = None
    previous = None

    token: list[str] = []  # as a token, the unit stays unread on its card until it leaves

    def show(pos, n, occluded=False, unread=None):
        if token and not pos["board"].get(token[0], {}).get("unit"):
            token.clear()
        unread = unread or (token[0] if token else None)
        for _ in range(n):
            frame = reading_of(pos, len(frames), occluded=occluded)
            if unread is not None and not occluded:
                cell = frame.cells[unread]
                cell.piece = PieceReading("empty", 0.76) if as_a_token else PieceReading(None)
                if as_a_token and cell.card is not None and cell.card.card != "JK":
                    code = cell.card.card
                    cell.card = CardReading(card=None, confidence=0.95,
                                            candidates=[(code, 0.95), (twin_of(code), 0.05)])
            frames.append(frame)

    show(last, 4)
    for action, pos in steps:
        words = action.split()
        if words[1] not in ("setup", "place", "initiative", "move", "attack"):
            last = pos
            continue
        frm, to = words[2].split("-") if words[1] == "move" else (None, None)
        alone = sum(1 for v in last["board"].values()
                    if (v.get("unit") or {}).get("side") == words[0]) == 1
        if chosen is None and frm is not None and frm != to and previous is not None \
                and previous.split()[1] == "move" and previous.split()[0] != words[0] \
                and parse_cell(previous.split()[2][-2:]) in NEIGHBOURS[parse_cell(frm)] \
                and (alone or not last_unit):
            chosen = action
            gone = copy.deepcopy(last)
            gone["board"][frm] = {"cards": last["board"][frm]["cards"]}
            show(last, 2, occluded=True)
            show(gone, 5)
            show(pos, unread_frames, unread=to)
            if as_a_token:
                token.append(to)
        else:
            show(last, 2, occluded=True)
            show(pos, 4)
        if words[1] == "move":
            previous = action
        last = pos
    return frames, chosen


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_unit_taken_off_as_a_card_next_door_comes_unread_had_moved_there(seed, monkeypatch):
    """A unit of the side to move seen gone in the enemy's attack is taken off; when, within
    MOVED_ON_FRAMES, a card is seen next door with no unit read on it, the removal is undone
    and the card is that unit's move (v9-s379). Without that, the move is lost."""
    from scanner import tracker_removal

    steps = record_game(seed)
    frames, move = _gone_before_its_card_is_seen(steps)
    assert move is not None
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    tracker = GameTracker(armies)
    for frame in frames:
        tracker.update(frame)
    events = [e.text for e in tracker.events]
    assert move in events and not any(e.endswith(f"removed {move.split()[2][:2]}")
                                      and events.index(e) < events.index(move) for e in events)
    assert events == truth_events(steps), tracker.holding
    monkeypatch.setattr(tracker_removal.UnitRemoval, "_taken_off_moved_on",
                        lambda *_: False)
    tracker = GameTracker(armies)
    for frame in frames:
        tracker.update(frame)
    assert move not in [e.text for e in tracker.events]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_token_read_bare_on_a_card_read_unsure_had_moved_there(seed):
    """As above, the unit a flat token that reads as bare (76 %) on the card it went onto,
    whose index it hides (read unsure, 95 %): the card is still that unit's move (session 50,
    v9-s379: a black paper king moved g4-f4 onto a 2S; only a card read sure was taken for a
    move whose unit reads empty, so black's turn was taken as passed: 58/76 -> 65/76)."""
    steps = record_game(seed)
    frames, move = _gone_before_its_card_is_seen(steps, as_a_token=True)
    assert move is not None and not move.endswith(" JK")
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in frames:
        tracker.update(frame)
    events = [e.text for e in tracker.events]
    assert move in events, tracker.holding
    assert events == truth_events(steps), tracker.holding


@pytest.mark.parametrize("seed", [1, 2])
def test_a_unit_seen_gone_before_it_is_seen_arrived_is_moving_not_removed(seed):
    steps = record_game(seed)
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    tracker = GameTracker(armies)
    for frame in _moves_seen_in_steps(steps):
        tracker.update(frame)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


def _later_same_colour_move(steps, i):
    """The first later move of the side that moves at step i, with another card of its colour."""
    side, card = steps[i][0].split()[0], steps[i][0].split()[3]
    for j, (action, _pos) in enumerate(steps[i + 1:], i + 1):
        w = action.split()
        if w[1] == "move" and w[0] == side and w[3] not in ("JK", card) \
                and (w[3][-1] in "HD") == (card[-1] in "HD"):
            return j, w[2].split("-")[1], w[3]
    raise AssertionError("no such move")


def _track_blurred(steps, seed, reads):
    """A tracker fed a game's frames, each card of `reads` (cell -> (its card, candidates))
    read unsure with those candidates wherever it shows."""
    tracker = GameTracker({Side(s): v for s, v in steps[0][1]["armies"].items()})
    for frame in frames_of(steps, _empty(steps), seed=seed):
        for name, (truth, candidates) in reads.items():
            _blur_card(frame, name, truth, candidates, 0.4)
        tracker.update(frame)
    return tracker


@pytest.mark.parametrize("seed", [1, 4, 12])
def test_a_card_taken_for_one_laid_later_is_weighed_with_that_place(seed):
    """The first movement card T is read likelier as W, a card its side lays later; the game
    goes on with W in question. When W is laid and read clearly enough, W cannot be in two
    places: the two places are weighed together and the question takes T, still asked."""

    steps = record_game(seed)
    i, cell, code = _first_move(steps)
    j, later_cell, later = _later_same_colour_move(steps, i)
    tracker = _track_blurred(steps[:j + 1], seed, {
        cell: (code, [(later, 0.6), (code, 0.4)]),
        later_cell: (later, [(later, 0.75), (code, 0.25)])})
    assert [e.text for e in tracker.events] == truth_events(steps[:j + 1]), tracker.holding
    first = next(e for e in tracker.events if e.kind == "move")
    assert first.question and later in first.question  # still asked: 0.4 x 0.75 is no proof
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


def _other_sides_move_of_colour(steps, i, j, colour_red):
    """A move of the other side than step i's, between steps i and j, with a card (not a
    joker) of the given colour: (step, cell, card)."""
    side = steps[i][0].split()[0]
    for k, (action, _pos) in enumerate(steps[i + 1:j], i + 1):
        w = action.split()
        if w[1] == "move" and w[0] != side and w[3] != "JK" and (w[3][-1] in "HD") == colour_red:
            return k, w[2].split("-")[1], w[3]
    raise AssertionError("no such move")


@pytest.mark.parametrize("seed", [2, 8, 12, 18])
def test_a_card_laid_later_is_weighed_with_its_own_decks_question_not_the_other_players(seed):
    """As above, and the other player's first movement card of that colour, B, is read
    likelier as W too: their game goes on with W from their own deck, asked. When W is laid
    by the first side, the question it is weighed with is that side's own (W cannot lie twice
    in one deck; the other deck's W is no rival): it takes T, and W stands as read. Keyed by
    card alone, the other player's question stood in for it (val-s7: white's JC laid on b2,
    read 83 %, was weighed against black's pile question on JC instead of white's own pile
    question holding it, read 33 %, and the game went on with a card nobody read there)."""

    steps = record_game(seed)
    i, cell, code = _first_move(steps)
    j, later_cell, later = _later_same_colour_move(steps, i)
    k, other_cell, other_code = _other_sides_move_of_colour(steps, i, j, later[-1] in "HD")
    tracker = _track_blurred(steps[:j + 1], seed, {
        cell: (code, [(later, 0.6), (code, 0.4)]),
        other_cell: (other_code, [(later, 0.6), (other_code, 0.4)]),
        later_cell: (later, [(later, 0.75), (code, 0.25)])})
    events = tracker.events
    want = truth_events(steps[:j + 1])
    assert len(events) == len(want), tracker.holding
    for e, t in zip(events, want, strict=True):
        if t == steps[k][0] and e.text != t:  # the other player's card, asked as W
            assert e.text == with_card(t, later) and e.question
        else:
            assert e.text == t
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


@pytest.mark.parametrize("seed", [2, 4, 5, 9])
def test_a_card_read_sure_moves_only_its_own_decks_question(seed):
    """The first movement card T is read likelier as W, a card of the other player's deck
    that they lay later (read sure); the other player's earlier card of that colour is read
    likelier as W too. When their W is read sure, their own question gives way (it can't
    hold W twice); the first player's question, of the other deck, is not touched: tried
    and put back, it kept a made-up past ("the game went on with" a card it never did)."""

    steps = record_game(seed)
    i, cell, code = _first_move(steps)
    side, red = steps[i][0].split()[0], code[-1] in "HD"
    (k, k_cell, k_code), (j, _j_cell, w) = [
        (n, a.split()[2].split("-")[1], a.split()[3]) for n, (a, _p) in enumerate(steps)
        if n > i and a.split()[1] == "move" and a.split()[0] != side
        and a.split()[3] != "JK" and (a.split()[3][-1] in "HD") == red][:2]
    tracker = _track_blurred(steps[:j + 1], seed, {
        cell: (code, [(w, 0.6), (code, 0.4)]), k_cell: (k_code, [(w, 0.6), (k_code, 0.4)])})
    first = with_card(steps[i][0], w)
    assert [e.text for e in tracker.events] == [
        first if t == steps[i][0] else t for t in truth_events(steps[:j + 1])], tracker.holding
    asked = {q.event.text: q for q in tracker.questions if hasattr(q, "event")}
    mine, theirs = asked[first], asked[steps[k][0]]
    assert mine.went_with == [] and theirs.went_with == [w]

def test_looks_at_different_pixels_add_up_reads_of_one_look_do_not():
    from scanner.observations import CardEvidence

    under_a_piece = [("7H", 0.36), ("5H", 0.27)]
    e = CardEvidence()
    for _ in range(5):  # one look, read five times
        e.add(under_a_piece)
    assert dict(e.ranked())["7H"] < 0.5 and e.looks == 1
    e.new_look()  # the card bare, glimpsed before the piece came
    e.add([("5H", 0.8), ("6H", 0.1)])
    ranked = e.ranked()
    assert ranked[0][0] == "5H" and ranked[0][1] > 0.9 and e.looks == 2
    e.new_look()  # a new look with nothing read yet changes nothing
    assert e.ranked() == ranked and e.copy().ranked() == ranked


@pytest.mark.parametrize(("seed", "p_later"), [(1, 0.6), (4, 0.6), (12, 0.6),
                                                (3, 0.93), (4, 0.93), (12, 0.93)])
def test_a_card_gives_way_to_the_same_card_read_sure_elsewhere(seed, p_later):
    """The first movement card T is read likelier as W, a card its side lays later: at 60 %
    the game goes on with W as an open question; at 93 % it takes W on the rules' word
    (flagged 'check it'; seeds whose first move leaves its cell, where ACCEPT applies). When W
    is laid and read sure, the rules refuse W twice: the first card takes its next likeliest
    (T), asked, and the later move stands as read."""

    steps = record_game(seed)
    i, cell, code = _first_move(steps)
    j, later_cell, later = _later_same_colour_move(steps, i)
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in frames_of(steps[:j + 1], _empty(steps), seed=seed):
        _blur_card(frame, cell, code, [(later, p_later), (code, 1.0 - p_later)])
        tracker.update(frame)
    assert [e.text for e in tracker.events] == truth_events(steps[:j + 1]), tracker.holding
    first = next(e for e in tracker.events if e.kind == "move")
    if p_later > 0.9:
        assert any("after the rules" in f for f in first.flags)
    # asked, or already settled on the card its reads left once W turned up sure
    assert f"going on with {code}" in (first.question or "") or any(
        "settled on later looks" in f for f in first.flags)
    assert any(f"now goes on with {code}" in f for e in tracker.events for f in e.flags)
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


def test_a_corrected_initiative_card_that_makes_a_tie_replays_the_redraw():
    """White's 2H is read likelier as 2D, so the game goes on as if black (2H) won the
    initiative and the next pair of cards began a new round, with the turns between filled in
    (passes, hands kept). A player then names 2H: the same card on both piles is a tie, both
    draw again, and the replay drops the filler the new past has no room for."""


    seed = 16
    steps = record_game(seed)
    tie = next(i for i, (a, _) in enumerate(steps) if a == "black initiative 2H")
    end = next(i for i in range(tie + 3, len(steps)) if steps[i][0].split()[1] == "move")
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in frames_of(steps[:end + 1], _empty(steps), seed=seed):
        _blur_initiative(frame, "white", "2H", [("2D", 0.7), ("2H", 0.3)])
        tracker.update(frame)
    want = truth_events(steps[:end + 1])
    asked = next(e for e in tracker.events if e.question)
    assert asked.text == "white initiative 2D"
    assert [e.text for e in tracker.events if e is not asked] == \
        [t for t in want if t != "white initiative 2H"], tracker.holding
    tracker.confirm("white initiative 2H")
    assert [e.text for e in tracker.events] == want and not tracker.open_questions()
    j = tracker.journal.index("white initiative 2H")  # the redraw, not a round of passes
    assert tracker.journal[j:j + 4] == ["white initiative 2H", "black initiative 2H",
                                        "white initiative JH", "black initiative 10H"]
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)
    assert tracker.state.initiative[Side.WHITE].code == steps[end][1]["initiative"]["white"]


def test_an_open_placement_follows_its_likeliest_answer_before_it_is_sure():
    """Set-up kinds lean the wrong way between two cells; later views lean the right way,
    enough to make it the likelier answer but not enough to settle it: the game goes on with
    the likelier answer (the log rewritten), and the question stays open."""
    from scanner.observations import FOLLOW, SWITCH
    from scanner.open_questions import PlacementQuestion

    steps = record_game(3)
    first_round = next(i for i, (a, _) in enumerate(steps) if a.split()[1] == "initiative")
    tracker, (k1, c1), (k2, c2) = _set_up_leaning_the_wrong_way(steps, first_round, True)
    q = next(q for q in tracker.questions if isinstance(q, PlacementQuestion))
    wrong = q.chosen
    for origin, kind, other in ((c1, k1, k2), (c2, k2, k1)):  # one more view of each
        q.add_view(origin, "a cell it moved to", {kind: 0.85, other: 0.15})
    best, p = q.ranked()[0]
    assert best != wrong and FOLLOW <= p < SWITCH
    assert tracker._settle_questions()
    assert q in tracker.questions and q.chosen == best
    placed = {e.text for e in tracker.events if e.kind == "place"}
    assert f"white place {k1} {c1}" in placed and f"white place {k2} {c2}" in placed
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


def test_an_open_placement_follows_an_answer_twice_as_likely_as_the_standing_one():
    """Below FOLLOW, a placement goes on with its likeliest answer once that is LEAD times as
    likely as the one standing (session 17, s51: black's kinds, read swapped at set-up, were
    likeliest right at 49 % and the game kept the swapped ones)."""
    from scanner.observations import FOLLOW, LEAD
    from scanner.open_questions import PlacementQuestion

    steps = record_game(3)
    first_round = next(i for i, (a, _) in enumerate(steps) if a.split()[1] == "initiative")
    tracker, (k1, c1), (k2, c2) = _set_up_leaning_the_wrong_way(steps, first_round, True)
    q = next(q for q in tracker.questions if isinstance(q, PlacementQuestion))
    wrong = q.chosen
    for look in range(40):  # further views, each a little the right way, until it is LEAD
        for origin, kind, other in ((c1, k1, k2), (c2, k2, k1)):
            q.add_view(origin, f"cell {look}", {kind: 0.55, other: 0.45})
        ranked = dict(q.ranked())
        best = max(ranked, key=ranked.get)
        if ranked[best] >= LEAD * ranked[wrong]:
            break
    assert best != wrong and ranked[best] < FOLLOW and ranked[best] >= LEAD * ranked[wrong]
    assert tracker._settle_questions()
    assert q in tracker.questions and q.chosen == best
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


def _white_s_second_initiative(seed):
    """A recorded game, white's first two initiative cards and the step of the first move
    after the second."""
    steps = record_game(seed)
    inits = [i for i, (a, _) in enumerate(steps) if a.startswith("white initiative")]
    first, second = steps[inits[0]][0].split()[-1], steps[inits[1]][0].split()[-1]
    if first == second:
        pytest.skip("the same card twice cannot be told apart by its pile")
    end = next(i for i in range(inits[1] + 1, len(steps)) if steps[i][0].split()[1] == "move")
    return steps, first, second, end


def _second_initiative_read_as_the_first(seed, p_covered, p_new):
    """White's next initiative card X read as Y, the card it covers, at `p_covered` and as
    itself at `p_new`, its pile's pixels changed while the rules await white's card. Returns
    the tracker, the truth events and X's event."""
    steps, covered, new, end = _white_s_second_initiative(seed)
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    seen_new = False
    for frame in frames_of(steps[:end + 1], _empty(steps), seed=seed):
        frame.changed = set()
        if _blur_initiative(frame, "white", new, [(covered, p_covered), (new, p_new)]) \
                and not seen_new:
            frame.changed, seen_new = {"init/white"}, True
        tracker.update(frame)
    event = next(e for e in tracker.events if e.text == f"white initiative {new}")
    return tracker, truth_events(steps[:end + 1]), event


@pytest.mark.parametrize("seed", [1, 2])
def test_a_new_initiative_card_read_as_the_last_one_is_news_when_its_pile_changed(seed):
    """White's next initiative card X is read leaning to Y, the card it covers (a club taken
    for a spade). Its pile's pixels changed while the rules await white's card, and one deck
    can't turn up Y twice: the rules weigh the read and X goes into the game, flagged."""
    tracker, want, event = _second_initiative_read_as_the_first(seed, 0.6, 0.38)
    assert [e.text for e in tracker.events] == want, tracker.holding
    assert any("after the rules" in f for f in event.flags), (event.flags, event.question)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_card_the_rules_leave_is_asked_where_the_reader_gave_it_next_to_nothing(seed):
    """As above, but the new card is read as the covered one at 99.85 % and as itself at 0.15 %
    (val-s47: a JS refused as an open question's card elsewhere left KS at 0.05 %, taken at
    "100 % after the rules"): what the rules leave is a guess, so the game goes on with it as
    an open question, not as a reading."""
    tracker, want, event = _second_initiative_read_as_the_first(seed, 0.9985, 0.0015)
    assert event.question and not any("after the rules" in f for f in event.flags)
    assert [e.text for e in tracker.events] == want, tracker.holding


@pytest.mark.parametrize("seed", [1, 2])
def test_a_new_initiative_card_on_a_pile_in_question_is_not_a_look_at_the_old_one(seed):
    """White's initiative card Y was read unsure between Y and X, and went on as an open
    question; white's next card X reads leaning to X, still one of the question's answers. Its
    pile's pixels changed while the rules await white's card: a new card, not one more look at
    Y (session 17, s42: 7C then 7S, the 7S taken as a look at the 7C in question, and the game
    one round behind from there)."""
    steps, old, new, end = _white_s_second_initiative(seed)
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    seen_new = False
    for frame in frames_of(steps[:end + 1], _empty(steps), seed=seed):
        frame.changed = set()
        if frame.initiative.get("white") is not None and not frame.occluded \
                and frame.initiative["white"].card == old and not tracker.open_questions():
            frame.changed = {"init/white"}
        _blur_initiative(frame, "white", old, [(old, 0.72), (new, 0.27)])
        if _blur_initiative(frame, "white", new, [(new, 0.89), (old, 0.107)]) \
                and not seen_new:
            frame.changed, seen_new = {"init/white"}, True
        tracker.update(frame)
    assert [e.text for e in tracker.events] == truth_events(steps[:end + 1]), tracker.holding


def _twin_read_run(seed):
    """A game read perfectly, except one initiative card X read sure as its twin Y (same rank,
    same colour: a club taken for a spade) for as long as it shows; the same side turns up
    the real Y later, bare (on its initiative pile or as a set-up card: a movement card read
    under its unit gives way itself, `test_a_movement_card_read_under_its_unit_as_...`)."""
    twin_suit = {"C": "S", "S": "C", "D": "H", "H": "D"}
    steps = record_game(seed)
    acts = [a for a, _pos in steps]
    for i, action in enumerate(acts):
        side, verb, card = action.split()[0], action.split()[1], action.split()[-1]
        if verb != "initiative" or card == "JK":
            continue
        twin = card[:-1] + twin_suit[card[-1]]
        shown = [a for a in acts if a.split()[0] == side and a.split()[-1] == twin
                 and a.split()[1] in ("initiative", "setup")]
        if any(a in acts[:i] for a in shown):
            continue
        later = shown[0] if shown else None
        if later is not None:
            break
    else:
        raise AssertionError("no card whose twin its deck turns up later")
    def edit(frame):
        pile = frame.initiative.get(side)
        if pile is not None and pile.card == card:
            pile.card = twin

    return steps, _track(steps, seed, edit), action, later, twin


@pytest.mark.parametrize("seed", [1, 2, 7])
def test_a_card_its_deck_turns_up_twice_was_its_twin_the_first_time(seed):
    # session 17, s64: black's initiative 4C read sure as 4S at round 1; the real 4S at
    # round 14 was refused ("no 4S is left in black's deck") and the game went wrong from there
    steps, tracker, first, later, twin = _twin_read_run(seed)
    texts = [e.text for e in tracker.events]
    assert texts == truth_events(steps), tracker.holding
    event = tracker.events[texts.index(first)]
    assert any(f"read as {twin}" in f for f in event.flags), event.flags
    assert any("read wrong" in f for f in tracker.events[texts.index(later)].flags)
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


@pytest.mark.parametrize("seed,first,later", [(1, 89, 122), (2, 17, 55)])
def test_a_movement_card_read_under_its_unit_as_a_card_seen_bare_before_is_its_twin(
        seed, first, later):
    """White's 8S initiative card is read bare; its 8C, laid later, reads as 8S under the unit
    that moved onto it, for as long as it shows. The rules refuse a second 8S: a piece hides
    part of a card, so the read under it is the misread and the card laid is the twin (s64:
    white's 3S initiative card was taken for a 3C instead, and both events came out wrong)."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    drawn, laid = steps[first][0].split()[-1], steps[later][0].split()[-1]
    cell = steps[later][0].split()[2].split("-")[1]
    assert laid[:-1] == drawn[:-1] and laid != drawn and " initiative " in steps[first][0]

    def edit(frame):
        c = frame.cells.get(cell)
        if c is not None and c.card is not None and c.card.card == laid and not frame.occluded:
            c.card = CardReading(card=drawn, confidence=0.99)

    tracker = _track(steps[:later + 1], seed, edit)
    texts = [e.text for e in tracker.events]
    assert texts == truth_events(steps[:later + 1]), tracker.holding
    event = tracker.events[texts.index(steps[later][0])]
    assert any(f"read as {drawn} under its unit" in f for f in event.flags)
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


@pytest.mark.parametrize("seed,laid,left", [(4, 27, 42), (7, 61, 118)])
@pytest.mark.parametrize("under", ["sure", "on the rules' word"])
def test_a_card_read_under_its_unit_is_read_again_once_bare(seed, laid, left, under):
    """A movement card is read as its twin while its unit stands on it: sure, or likeliest
    (93 %) and taken on the rules' word. Once the unit has left, the card reads right for
    several frames: the game goes on with the bare read, flagged (session 18, s42: a 6H under
    a rook read as 4H at 99.9 %, as 6H at 99.98 % once bare). Where both reads were sure, the
    move is asked (or settled by the bare reads that follow), never rewritten on one read's
    word (val-s7: a JS read sure under its knight was rewritten to a QS misread bare)."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    words = steps[laid][0].split()
    cell, card = words[2].split("-")[1], words[3]
    twin = card[:-1] + {"C": "S", "S": "C", "D": "H", "H": "D"}[card[-1]]
    assert steps[left][0].split()[2].startswith(cell + "-")

    def edit(frame):
        c = frame.cells.get(cell)
        if c is None or c.card is None or c.card.card != card or frame.occluded \
                or c.piece is None or c.piece.piece in (None, "empty"):
            return  # (bare: read right)
        c.card = CardReading(card=twin, confidence=0.99) if under == "sure" else \
            CardReading(card=None, confidence=0.93, candidates=[(twin, 0.93), (card, 0.07)])

    tracker = _track(steps[:left + 12], seed, edit)
    texts = [e.text for e in tracker.events]
    assert texts == truth_events(steps[:left + 12]), tracker.holding
    event = tracker.events[texts.index(steps[laid][0])]
    assert any(f"read as {twin} under its unit, and as {card} once bare" in f
               for f in event.flags), event.flags
    if under == "sure":  # two sure reads disagreed: asked, until later looks settled it
        assert event.question is not None or any("settled on later looks" in f
                                                 for f in event.flags), event.flags
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


def _white_moves(acts: list[str]):
    """(index, words) of each of white's moves in a game's actions that lays no joker."""
    for i, a in enumerate(acts):
        w = a.split()
        if w[:2] == ["white", "move"] and w[3] != "JK":
            yield i, w


def _frame_steps(steps, settle: int = 4, hands: int = 2) -> list[int]:
    """For each frame `frames_of` makes, the index of the step it shows (-1: the empty table)."""
    from tests.tracker_sim import VISIBLE

    owner = [-1] * settle
    for i, (action, _pos) in enumerate(steps):
        if action.split()[1] in VISIBLE or action.split()[1] == "attack":
            owner += [i] * (hands + settle)
    return owner


def _unit_misread_empty(max_seed: int = 40):
    """A black unit U on D that stays there while white moves twice: first a unit that can't
    attack D (M1), later one that can (M2). Returns (steps, seed, D, i1, i2) or None."""
    from scanner.tracker_removal import _reaches

    for seed in range(1, max_seed):
        steps = record_game(seed)
        acts = [a for a, _pos in steps]
        for i1, a in enumerate(acts):
            w = a.split()
            if w[:2] != ["white", "move"] or i1 == 0:
                continue
            before = steps[i1 - 1][1]["board"]
            kind = before[w[2].split("-")[0]]["unit"]["kind"]
            to = parse_cell(w[2].split("-")[1])
            for d, entry in before.items():
                unit = entry.get("unit")
                if not unit or unit["side"] != "black" or _reaches(kind, to, parse_cell(d)):
                    continue
                stay = next((j for j in range(i1, len(steps))
                             if (steps[j][1]["board"].get(d) or {}).get("unit") != unit),
                            len(steps))
                for i2 in range(i1 + 8, stay):
                    v = acts[i2].split()
                    if v[:2] == ["white", "move"]:
                        k2 = steps[i2 - 1][1]["board"][v[2].split("-")[0]]["unit"]["kind"]
                        if _reaches(k2, parse_cell(v[2].split("-")[1]), parse_cell(d)) \
                                and stay > i2 + 3:
                            return steps[:i2 + 3], seed, d, i1, i2
    return None


def test_a_unit_no_attack_could_reach_is_not_taken_off():
    """White moves a unit that can't attack D (a melee unit diagonal to it, say), and the
    black unit on D then reads empty until white's later move by a unit that could: not one
    removal is logged, for the empty reads came before that move (val-s23: a dreamchess bishop
    read empty at 62 % after a knight moved diagonal to it was taken off two turns early,
    and its real removal was lost)."""
    from scanner.detections import PieceReading

    found = _unit_misread_empty()
    assert found is not None
    steps, seed, d, i1, i2 = found
    owner = _frame_steps(steps)

    def edit(frame):
        step = owner[frame.frame_index] if frame.frame_index < len(owner) else len(steps)
        c = frame.cells.get(d)
        if c is None or frame.occluded or c.piece is None or step < i1:
            return
        # empty, firmly, after M1; unsure from M2 on (the unit stands there all along)
        c.piece = PieceReading("empty", 0.95) if step < i2 else PieceReading(None, 0.5)

    tracker = _track(steps, seed, edit)
    assert not any(e.kind == "removed" and e.text.endswith(" " + d) for e in tracker.events), \
        [e.text for e in tracker.events]
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_two_questions_of_one_deck_that_read_as_each_other_trade(seed):
    """White lays Y on C, read under its unit as X 90 % (the game goes on with X); white's X
    turns up on its pile later, read X 84 %, Y 16 %, and goes on as Y, the reads there
    being too weak to take X from C. Once C's unit has left, C reads Y 99 % bare: the two
    questions trade (C takes Y, the pile X), neither asserted wrong (xv-s71: white's 8C on
    c2 and 8S on its pile)."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    acts = [a for a, _pos in steps]
    found = None
    for i, w in _white_moves(acts):
        y, cell = w[3], w[2].split("-")[1]
        left = next((j for j in range(i + 1, len(acts)) if acts[j].split()[1] == "move"
                     and acts[j].split()[2].startswith(cell + "-")
                     and not acts[j].split()[2].endswith("-" + cell)), None)
        covered = next((j for j in range(i + 1, len(acts)) if acts[j].split()[1] == "move"
                        and acts[j].split()[2].endswith("-" + cell)), len(acts))
        piles = [(k, b.split()[-1]) for k, b in enumerate(acts) if i < k
                 and b.split()[:2] == ["white", "initiative"] and b.split()[-1] not in (y, "JK")
                 and (b.split()[-1][-1] in "HD") == (y[-1] in "HD")
                 and not any(c.split()[-1] == b.split()[-1] for c in acts if " move " in c)]
        if left is not None and piles and piles[0][0] < left < covered:
            found = (i, cell, y, left, piles[0][1])
            break
    if found is None:
        pytest.skip("no such game")
    i, cell, y, left, x = found
    owner = _frame_steps(steps)

    def edit(frame):
        step = owner[frame.frame_index] if frame.frame_index < len(owner) else len(steps)
        c = frame.cells.get(cell)
        if c is not None and c.card is not None and c.card.card == y and not frame.occluded:
            c.card = CardReading(card=None, confidence=0.9, candidates=[(x, 0.9), (y, 0.1)]) \
                if step < left else CardReading(card=None, confidence=0.99,
                                                 candidates=[(y, 0.99), (x, 0.01)])
        _blur_initiative(frame, "white", x, [(x, 0.84), (y, 0.16)])

    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    texts = []  # the move's text after every frame, once logged
    for frame in frames_of(steps, _empty(steps), seed=seed):
        edit(frame)
        tracker.update(frame)
        move = next((e for e in tracker.events if e.text.split()[:3] == acts[i].split()[:3]),
                    None)
        if move is not None:
            texts.append(move.text)
    wrong = [e.text for e in tracker.events if e.question is None
             and e.text not in truth_events(steps)]
    assert not wrong, wrong
    assert texts[-1] == acts[i], (texts[-1], move.question)
    # traded once, for good: the pair never trades back on the frames that follow
    changes = sum(a != b for a, b in zip(texts[:-1], texts[1:], strict=True))
    assert changes <= 1, changes


def test_a_card_a_player_confirmed_is_never_rewritten_from_later_looks():
    """A movement card read 93 % as its twin under its unit goes on (flagged, watched); a
    player confirms that twin. Once the unit has left, the card reads sure as itself, bare:
    what the players said stands (nothing they entered is ever lost), unasked."""
    from scanner.detections import CardReading

    seed, laid, left = 4, 27, 42
    steps = record_game(seed)[:left + 12]
    words = steps[laid][0].split()
    cell, card = words[2].split("-")[1], words[3]
    twin = card[:-1] + {"C": "S", "S": "C", "D": "H", "H": "D"}[card[-1]]
    said = " ".join(words[:3] + [twin])
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    confirmed = False
    for frame in frames_of(steps, _empty(steps), seed=seed):
        c = frame.cells.get(cell)
        if c is not None and c.card is not None and c.card.card == card and not frame.occluded \
                and c.piece is not None and c.piece.piece not in (None, "empty"):
            c.card = CardReading(card=None, confidence=0.93, candidates=[(twin, 0.93),
                                                                        (card, 0.07)])
        tracker.update(frame)
        if not confirmed and any(e.text == said for e in tracker.events):
            tracker.confirm(said)
            confirmed = True
    assert confirmed
    event = next(e for e in tracker.events if e.text.split()[:3] == words[:3])
    assert event.text == said and event.question is None, (event.text, event.flags)
    assert any(f.startswith("confirmed by a player") for f in event.flags)
    assert not any("once bare" in f for f in event.flags)


@pytest.mark.parametrize("seed,laid,left", [(4, 27, 42), (7, 61, 118)])
def test_a_card_read_sure_under_its_unit_and_sure_otherwise_bare_is_asked(seed, laid, left):
    """A movement card reads right and sure under its unit (99.8 %), and once the unit has
    left as another card of its colour, sure too (99.9 %). Two sure reads disagree: the move
    is an open question naming both, not rewritten to the bare misread (val-s7: a berlin JS
    under a knight read JS, bare as QS, and the game logged QS)."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    words = steps[laid][0].split()
    cell, card = words[2].split("-")[1], words[3]
    other = card[:-1] + {"C": "S", "S": "C", "D": "H", "H": "D"}[card[-1]]

    def edit(frame):
        c = frame.cells.get(cell)
        if c is None or c.card is None or c.card.card != card or frame.occluded:
            return
        bare = c.piece is None or c.piece.piece in (None, "empty")
        c.card = CardReading(card=other, confidence=0.999) if bare else \
            CardReading(card=card, confidence=0.998)

    tracker = _track(steps[:left + 12], seed, edit)
    event = next(e for e in tracker.events if e.text.split()[:3] == words[:3])
    assert event.question is not None, event.flags
    assert card in event.question and other in event.question
    assert [e.text for e in tracker.events if e.question is None] == \
        [t for t in truth_events(steps[:left + 12]) if t.split()[:3] != words[:3]]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_card_read_sure_gives_way_when_its_deck_turns_it_up_again(seed):
    """White lays Y, read sure as X (99.9 %), its reads' candidates leaning Y (70 %). Rounds
    later white's real X turns up on its initiative pile, read unsure as X alone (97 %), and
    the rules refuse it (X was laid): the two reads weighed together say the earlier was
    wrong. The move is rewritten to Y and flagged, the pile takes X, and no event is wrong
    (val-s7: a berlin KD read JD sure refused white's JD on its pile, and the game went on
    with a QH the reader never named)."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    acts = [a for a, _pos in steps]
    i, cell, laid, x = _turned_up_again(acts)

    def edit(frame):
        c = frame.cells.get(cell)
        if c is not None and c.card is not None and c.card.card == laid:
            c.card = CardReading(card=x, confidence=0.999, candidates=[(laid, 0.7), (x, 0.3)])
        _blur_initiative(frame, "white", x, [(x, 0.97)])

    tracker = _track(steps, seed, edit)
    asserted = [e.text for e in tracker.events if e.question is None]
    assert asserted == truth_events(steps), tracker.holding
    event = next(e for e in tracker.events if e.text == acts[i])
    assert any(f"read as {x}, but {x} turned up again later" in f for f in event.flags)
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


@pytest.mark.parametrize("seed", [1, 3, 4, 5])
def test_an_earlier_sure_read_gives_way_to_a_card_an_even_question_holds(seed):
    """As above (white's Y read sure as X, its reads leaning Y; white's real X on its pile
    later), and in between white lays Z, of Y's colour, read as Y 52 %, Z 48 %: the game goes
    on with Y there, asked. When X turns up, the earlier move's next best card Y is held by
    that question, whose own reads weigh Z nearly as much: it goes on with Z, still asked, and
    the earlier move takes Y (v5-s227: white's QH on its pile, read JH, had to give way to
    the real JH, but its QH was held by the question on b1, read QH 47 %, QD 47 %; the game
    stalled there and re-read the table)."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    acts = [a for a, _pos in steps]
    i, cell, laid, x = _turned_up_again(acts)
    pile = acts.index(f"white initiative {x}")
    m, z_cell, z = next((n, w[2].split("-")[1], w[3]) for n, w in _white_moves(acts)
                        if i < n < pile and w[3] not in (laid, x)
                        and (w[3][-1] in "HD") == (laid[-1] in "HD"))

    def edit(frame):
        c = frame.cells.get(cell)
        if c is not None and c.card is not None and c.card.card == laid:
            c.card = CardReading(card=x, confidence=0.999, candidates=[(laid, 0.7), (x, 0.3)])
        _blur_card(frame, z_cell, z, [(laid, 0.52), (z, 0.48)], 0.52)
        _blur_initiative(frame, "white", x, [(x, 0.97)])

    tracker = _track(steps, seed, edit)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding
    asked = next(e for e in tracker.events if e.text == acts[m])
    assert asked.question is not None and laid in asked.question
    event = next(e for e in tracker.events if e.text == acts[i])
    assert any(f"read as {x}, but {x} turned up again later" in f for f in event.flags)
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)

def _turned_up_again(acts: list[str]) -> tuple[int, str, str, str]:
    """A white move laying Y on a cell, and X: a later white initiative card of Y's colour
    never laid on the board (a pile only). (the move's index, cell, Y, X)"""
    for i, w in _white_moves(acts):
        later = [b.split()[-1] for b in acts[i + 1:] if b.split()[:2] == ["white", "initiative"]]
        xs = [x for x in later[2:] if x != "JK" and x != w[3] and (x[-1] in "HD") ==
              (w[3][-1] in "HD") and not any(b.split()[-1] == x for b in acts if " move " in b)]
        if xs:
            return i, w[2].split("-")[1], w[3], xs[0]
    raise AssertionError("no such move in this game")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_earlier_sure_read_gives_way_to_its_likeliest_card_the_rules_allow(seed):
    """As above, but the earlier place's reads name X 95 %, then a card of white's already on
    the table (its first set-up card) 4 %, and Y only 1 %: the set-up card can't lie there,
    so the earlier move takes Y, the next card its reads name (v5-s227: black's JC under its
    king read JS 95 %, QS 5 %, JC 0.2 %; black's QS was on the table, and the real JS read
    99.99 % on f2 was refused until the table was re-read). The pile reads X 99.99 %, as
    there: read 97 %, the 3 % its reads leave to the cards allowed on the pile outweigh
    Y's 1 % at the earlier place, and the pile is asked instead."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    acts = [a for a, _pos in steps]
    i, cell, laid, x = _turned_up_again(acts)
    on_table = next(a.split()[-1] for a in acts if a.split()[:2] == ["white", "setup"])

    def edit(frame):
        c = frame.cells.get(cell)
        if c is not None and c.card is not None and c.card.card == laid:
            c.card = CardReading(card=x, confidence=0.999,
                                 candidates=[(x, 0.95), (on_table, 0.04), (laid, 0.01)])
        _blur_initiative(frame, "white", x, [(x, 0.9999)])

    tracker = _track(steps, seed, edit)
    asserted = [e.text for e in tracker.events if e.question is None]
    assert asserted == truth_events(steps), tracker.holding
    event = next(e for e in tracker.events if e.text == acts[i])
    assert any(f"read as {x}, but {x} turned up again later" in f and f"taken as {laid}" in f
               for f in event.flags), event.flags


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_earlier_sure_read_stands_against_a_later_place_that_reads_only_refused_cards(seed):
    """White's move laying Y is read Y 99.6 %, X 0.4 %. White's later initiative card X reads
    Y 55 % and, 41 %, white's first set-up card, which lies on the table: neither can be on the
    pile. That the pile holds some card its reads left out (its reads' rest, 4 %, over every
    card allowed there) is likelier than that the sure read was wrong (0.4 % times 55 %), so
    the move keeps Y and the pile is asked (v5-s239: white's joker read QS 55 %, QC 41 %
    turned white's QS, read 99.6 % on its pile twelve rounds before, into a JS; the pile
    was weighed by its single likeliest allowed card, one share of the rest, 0.04 %)."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    acts = [a for a, _pos in steps]
    i, cell, laid, x = _turned_up_again(acts)
    on_table = next(a.split()[-1] for a in acts if a.split()[:2] == ["white", "setup"])
    pile = next(a for a in acts[i + 1:] if a == f"white initiative {x}")

    def edit(frame):
        c = frame.cells.get(cell)
        if c is not None and c.card is not None and c.card.card == laid:
            c.card = CardReading(card=laid, confidence=0.996,
                                 candidates=[(laid, 0.996), (x, 0.004)])
        _blur_initiative(frame, "white", x, [(laid, 0.55), (on_table, 0.41)])

    tracker = _track(steps, seed, edit)
    event = next(e for e in tracker.events if e.text.split()[:3] == acts[i].split()[:3])
    assert event.text == acts[i] and event.question is None
    assert not any("turned up again" in f for e in tracker.events for f in e.flags)
    asserted = [e.text for e in tracker.events if e.question is None]
    assert asserted == [t for t in truth_events(steps) if t != pile], tracker.holding


def test_an_earlier_sure_read_stands_while_the_later_place_names_a_card_it_may_be():
    """As above, but the pile's reads also name, at 35 %, a card the rules allow there: the
    past is not doubted on a read that has an answer of its own (val-s7: a pile read JC 36 %,
    JS 25 %, JK 16 % would have turned a JS read sure under its knight into a QS)."""
    from engines.royal_battles.cards import CARDS
    from scanner.detections import CardReading

    seed = 1
    steps = record_game(seed)
    acts = [a for a, _pos in steps]
    i = next(i for i, a in enumerate(acts) if a.split()[:2] == ["white", "move"]
             and a.split()[3] != "JK")
    cell, laid = acts[i].split()[2].split("-")[1], acts[i].split()[3]
    red = laid[-1] in "HD"
    seen = {a.split()[-1] for a in acts if a.startswith("white ")}  # white's deck's cards
    x = next(b.split()[-1] for b in acts[i + 1:] if b.split()[:2] == ["white", "initiative"]
             and b.split()[-1] not in (laid, "JK") and (b.split()[-1][-1] in "HD") == red
             and not any(a.split()[-1] == b.split()[-1] for a in acts if " move " in a))
    other = next(c for c in CARDS if c not in seen and c != "JK")  # never drawn: allowed

    def edit(frame):
        c = frame.cells.get(cell)
        if c is not None and c.card is not None and c.card.card == laid:
            c.card = CardReading(card=x, confidence=0.999, candidates=[(laid, 0.7), (x, 0.3)])
        _blur_initiative(frame, "white", x, [(x, 0.6), (other, 0.35)])

    tracker = _track(steps, seed, edit)
    event = next(e for e in tracker.events if e.text.split()[:3] == acts[i].split()[:3])
    assert event.text.split()[-1] == x
    assert not any("turned up again" in f for e in tracker.events for f in e.flags)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_question_whose_next_answer_turned_up_elsewhere_takes_the_one_after(seed):
    """White lays Y, read unsure as Z 60 %, W 30 %, Y 9 %: the game goes on with Z. Later
    white lays W (read sure), and later still white's real Z turns up on its initiative
    pile, read Z 95 %. The question's next answer W lies elsewhere now, so the one after
    it, Y, is weighed: the move takes Y and the pile Z (val-s7: b2's question kept a card
    its reads gave nothing and refused white's real QS on its pile)."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    acts = [a for a, _pos in steps]
    red = "HD"
    found = None
    for i, w in _white_moves(acts):
        y, cell = w[3], w[2].split("-")[1]
        same = [(j, b.split()[-1]) for j, b in enumerate(acts) if j > i
                and b.split()[0] == "white" and b.split()[-1] not in (y, "JK")
                and (b.split()[-1][-1] in red) == (y[-1] in red)]
        laid = [(j, c) for j, c in same if " move " in acts[j]]
        piles = [(k, c) for k, c in same if " initiative " in acts[k]
                 and not any(b.split()[-1] == c for b in acts if " move " in b)]
        pair = next(((jw, cw, kz, cz) for jw, cw in laid for kz, cz in piles if kz > jw + 8),
                    None)
        if pair is not None:
            found = (i, cell, y) + pair
            break
    assert found is not None
    i, cell, y, _j, w_card, _k, z = found

    def edit(frame):
        c = frame.cells.get(cell)
        if c is not None and c.card is not None and c.card.card == y:
            c.card = CardReading(card=None, confidence=0.6,
                                 candidates=[(z, 0.6), (w_card, 0.3), (y, 0.09)])
        _blur_initiative(frame, "white", z, [(z, 0.95)])

    tracker = _track(steps, seed, edit)
    event = next(e for e in tracker.events if e.text.split()[:3] == acts[i].split()[:3])
    assert event.text == acts[i], (event.text, event.question)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_glimpse_of_the_covered_card_is_no_look_at_the_card_laid_over_it(seed):
    """While the hand lays Y over O, the occluded frames glimpse O. The settled frames read Y
    unsure (80 %): the question on the move weighs Y's reads, never the glimpses of O
    (val-s19: an 8D glimpsed while black laid an AS on it made the AS's reads 96 % 8D, and
    AS read 97 % stayed open to the end)."""
    from scanner.detections import CardReading
    from scanner.open_questions import CardQuestion

    steps = record_game(seed)
    acts = [a for a, _pos in steps]
    i = next(i for i, a in enumerate(acts) if " move " in a and a.split()[3] != "JK"
             and steps[i - 1][1]["board"].get(a.split()[2].split("-")[1]))
    cell, laid = acts[i].split()[2].split("-")[1], acts[i].split()[3]
    covered = steps[i - 1][1]["board"][cell]["cards"][-1]

    def edit(frame):
        c = frame.cells.get(cell)
        if c is None or c.card is None:
            return
        if frame.occluded and c.card.card == covered:
            frame.glimpses[cell] = CardReading(card=None, confidence=0.98,
                                               candidates=[(covered, 0.98)])
        elif not frame.occluded and c.card.card == laid:
            c.card = CardReading(card=None, confidence=0.8, candidates=[(laid, 0.8)])

    tracker = _track(steps[:i + 1], seed, edit)
    q = next(q for q in tracker.questions if isinstance(q, CardQuestion)
             and q.event.text == acts[i])
    assert covered not in dict(q.evidence.ranked())
    assert q.ranked()[0][0] == laid


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_question_with_no_other_reading_gives_way_to_a_card_the_rules_allow(seed):
    """One of white's movement cards Y reads unsure as X alone (76 %) for as long as it
    shows, X a card of its colour that white lays later: the game goes on with X as an open
    question, and when X turns up the question gives way to a card the rules allow there,
    still asked, and the rest of the game is read (session 17, s64: black's 2C read as the
    joker at 76 % refused black's last joker later)."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    acts = [a for a, _pos in steps]
    red = "HD"
    for i, a in enumerate(acts):
        w = a.split()
        if w[0] != "white" or w[1] != "move" or w[3] == "JK":
            continue
        first, to = w[3], w[2].split("-")[1]
        later = next((b for b in acts[i + 1:] if b.split()[0] == "white"
                      and b.split()[1] == "move" and b.split()[3] not in (first, "JK")
                      and (b.split()[3][-1] in red) == (first[-1] in red)), None)
        if later is not None:
            break
    ghost = later.split()[-1]

    def edit(frame):
        cell = frame.cells.get(to)
        if cell is not None and cell.card is not None and cell.card.card == first:
            cell.card = CardReading(card=None, confidence=0.76, candidates=[(ghost, 0.76)])

    tracker = _track(steps, seed, edit)
    asked = [e for e in tracker.events if e.question is not None]
    assert [e.text.split()[:3] for e in asked] == [acts[i].split()[:3]], tracker.holding
    asserted = [e.text for e in tracker.events if e.question is None]
    assert asserted == [w for w in truth_events(steps) if w != acts[i]], tracker.holding
    assert any(f"{ghost} was seen here" in f for e in tracker.events if e.text == later
               for f in e.flags)


def test_reads_of_a_card_another_question_went_on_with_do_not_settle_a_question():
    """Black's AS went on (flagged) at c3; black's initiative pile then reads AS 81 %, which
    the rules rule out, so the pile went on with AC. Within its answers AC is 'sure', but the
    read is of AS, which may be the card that lies here after all: no settling on it."""
    from scanner.observations import FOLLOW, SWITCH, CardEvidence
    from scanner.open_questions import CardQuestion, against_rivals
    from scanner.tracker import TableEvent

    tracker = GameTracker()
    cards = ["AC", "AS", "AH", "AD", "2C"]

    def question(key, text, reads, chosen, answers, watched=False):
        e = CardEvidence()
        e.add(reads)
        q = CardQuestion(key, key, TableEvent(0, text, "move"), 0, None, answers, e, chosen,
                          watched=watched)
        tracker.questions.append(q)
        return q

    question("c3.card", "black move b4-c3 AS", [("AS", 0.92), ("AC", 0.08)], "AS", cards,
             watched=True)
    pile = question("init.black", "black initiative AC", [("AS", 0.81), ("AC", 0.19)], "AC",
                    [c for c in cards if c != "AS"])
    assert pile.ranked()[0] == ("AC", pytest.approx(1.0, abs=0.01))  # the rules alone
    # (weighed with c3's reads, which name AS surer than the pile's do, AC is 73 % here)
    assert against_rivals(pile, "AC", tracker._questions_by_deck()) < FOLLOW
    assert not tracker._settle_questions() and pile in tracker.questions
    # the other player's AS is no rival: white's deck has its own
    tracker.questions[0].event.text = "white move b4-c3 AS"
    assert against_rivals(pile, "AC", tracker._questions_by_deck()) >= SWITCH


def test_two_questions_each_read_a_little_as_the_other_s_card_are_weighed_together():
    """White's 7C (read 7S at 15 %) and later 7S (read 7C at 10 %): either question alone
    could hold the other's card, but both places can't hold the same one, and the pair the
    reads make likeliest is 98 % sure (session 18, s42), so both settle."""
    from engines.royal_battles.cards import CARDS
    from scanner.observations import SWITCH, CardEvidence
    from scanner.open_questions import CardQuestion, against_rivals
    from scanner.tracker import TableEvent

    tracker = GameTracker()
    sevens = [c for c in CARDS if c not in ("7C", "7S")]

    def question(key, text, reads, chosen):
        e = CardEvidence()
        e.add(reads)
        q = CardQuestion(key, key, TableEvent(0, text, "initiative"), 0, None,
                          sevens + [chosen], e, chosen)
        tracker.questions.append(q)
        return q

    first = question("init.white", "white initiative 7C", [("7C", 0.85), ("7S", 0.15)], "7C")
    second = question("d3.card", "white move d2-d3 7S", [("7S", 0.9), ("7C", 0.1)], "7S")
    decks = tracker._questions_by_deck()
    assert second.evidence.ranked()[0][1] < SWITCH  # neither alone
    assert against_rivals(first, "7C", decks) >= SWITCH
    assert against_rivals(second, "7S", decks) >= SWITCH
    tracker._settle_questions()
    assert tracker.questions == []
    assert all(any("settled on later looks" in f for f in q.event.flags) for q in (first, second))
    # black's 7C is no rival of white's 7S
    third = question("init.black", "black initiative 7C", [("7C", 0.85), ("7S", 0.15)], "7C")
    fourth = question("e3.card", "white move d2-e3 7S", [("7S", 0.9), ("7C", 0.1)], "7S")
    assert against_rivals(fourth, "7S", tracker._questions_by_deck()) == pytest.approx(
        fourth.ranked()[0][1])
    assert third in tracker.questions


def test_a_deck_s_two_jokers_do_not_hold_each_other_open():
    """A deck holds two jokers: two of its questions each read a joker at 99 % are both
    jokers, not rivals for one card (val-s19: white's two initiative jokers held each other
    at 50 % to the game's end); two reads of one single card still are."""
    from engines.royal_battles.cards import CARDS
    from scanner.observations import SWITCH, CardEvidence
    from scanner.open_questions import CardQuestion, against_rivals
    from scanner.tracker import TableEvent

    tracker = GameTracker()

    def question(key, text, reads, chosen):
        e = CardEvidence()
        e.add(reads)
        q = CardQuestion(key, key, TableEvent(0, text, "initiative"), 0, None,
                          list(CARDS), e, chosen)
        tracker.questions.append(q)
        return q

    first = question("init.white", "white initiative JK", [("JK", 0.99), ("QS", 0.01)], "JK")
    second = question("d3.card", "white move d2-d3 JK", [("JK", 0.99), ("KC", 0.01)], "JK")
    decks = tracker._questions_by_deck()
    assert against_rivals(first, "JK", decks) >= SWITCH
    assert against_rivals(second, "JK", decks) >= SWITCH
    # the same for a card the deck holds once: the two places can't both hold it
    third = question("init.black", "black initiative QS", [("QS", 0.99), ("JK", 0.01)], "QS")
    fourth = question("e3.card", "black move d2-e3 QS", [("QS", 0.99), ("KS", 0.01)], "QS")
    decks = tracker._questions_by_deck()
    assert against_rivals(third, "QS", decks) < 0.9
    assert against_rivals(fourth, "QS", decks) < 0.9


def test_an_answer_that_adds_filler_keeps_later_questions_in_step():
    """The reverse of the tie above: white's 2H leans to 2H, so the game goes on with a tie
    and a redraw. A later movement card is read unsure (a second question). A player names
    another card for white's: no tie, so the turns before the redraw's cards are filled in and the
    journal grows. The later question still points at its own action, so answering it
    rewrites that action and nothing else."""

    from scanner.open_questions import CardQuestion

    seed = 16
    steps = record_game(seed)
    tie = next(i for i, (a, _) in enumerate(steps) if a == "black initiative 2H")
    move = next(i for i in range(tie + 3, len(steps)) if steps[i][0].split()[1] == "move")
    cell = steps[move][0].split()[2].split("-")[1]
    code = steps[move][0].split()[-1]
    end = next(i for i in range(move + 1, len(steps)) if steps[i][0].split()[1] == "move")
    shown = {a.split()[-1] for a, _ in steps[:end + 1] if a.startswith("white")}
    other = next(c for c in ("2D", "2S", "2C") if c not in shown)  # white's, still in its deck
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in frames_of(steps[:end + 1], _empty(steps), seed=seed):
        _blur_initiative(frame, "white", "2H", [("2H", 0.6), (other, 0.4)])
        _blur_card(frame, cell, code, [(code, 0.6), ("JK", 0.4)])
        tracker.update(frame)
    later = next(q for q in tracker.questions
                 if isinstance(q, CardQuestion) and q.key == f"{cell}.card")
    before = len(tracker.journal)
    tracker.confirm(f"white initiative {other}")
    assert len(tracker.journal) > before  # the tie's redraw became a round played out
    tracker.confirm(" ".join(later.event.text.split()[:-1] + ["JK"]))
    assert tracker.journal[later.entry] == later.event.text and later.event.text.endswith("JK")
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)
    top = tracker.state.top(parse_cell(cell))
    assert top.card.code == "JK"


def test_a_unit_read_sure_is_placed_before_its_army_is_all_down():
    """At set-up the record follows the table unit by unit: a unit whose kind is sure is
    placed while the others are still to come; one read 50/50 waits for the rest."""
    from scanner.detections import PieceReading

    steps = record_game(3)
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    first = next(i for i, (a, _) in enumerate(steps) if a.split()[1] == "place")
    tracker = GameTracker(armies)
    for frame in frames_of(steps[:first + 1], _empty(steps), seed=3):
        tracker.update(frame)
    assert [e.text for e in tracker.events] == truth_events(steps[:first + 1])
    # the same, with the first unit's kind unsure between two the army has
    _, _, kind, cell = steps[first][0].split()
    other = next(k for k in armies[Side.WHITE] if k != kind)
    tracker = GameTracker(armies)
    for frame in frames_of(steps[:first + 1], _empty(steps), seed=3):
        p = frame.cells[cell].piece
        if p is not None and p.piece and p.piece.startswith("white"):
            frame.cells[cell].piece = PieceReading(None, 0.5, occupied=True, seen_side="white",
                                                   kinds=[(kind, 0.5), (other, 0.5)])
        tracker.update(frame)
    assert not any(e.kind == "place" for e in tracker.events)
    assert "to go" in tracker.holding


def test_placed_units_leave_out_the_units_whose_kinds_are_in_question():
    """What the piece classifier may adapt from: every unit where the game placed it, but not
    the units whose kinds are still an open question (they might teach it the wrong look),
    nor the side's units of a kind those might be (one example of a kind would then decide the
    doubt); the same side's other units are kept (v8-s349: a queen and king read as each
    other left the set unlearnt, its bishop and knight sure). Once a unit of that side has
    moved, the question's cells no longer say which unit is which: the whole side is left
    out."""
    from scanner.open_questions import PlacementQuestion

    # seed 1: white's four kinds differ, so two read as each other leave two sure
    steps, first_round, sure, want = _set_up_read_right(seed=1)
    assert sure.placed_units() == want and len(want) == 8
    unsure, (_, c1), (_, c2) = _set_up_leaning_the_wrong_way(steps, first_round)
    q = next(q for q in unsure.questions if isinstance(q, PlacementQuestion))
    assert q.side is Side.WHITE and q.doubted() == {c1, c2}
    assert unsure.placed_units() == {c: u for c, u in want.items() if c not in (c1, c2)}
    assert len(unsure.placed_units()) == 6
    units = unsure.state.units
    frm = next(c for c, u in units.items() if u.side is Side.WHITE and CELL_NAMES[c] != c1)
    units[next(c for c in NEIGHBOURS[frm] if c not in units)] = units.pop(frm)
    assert unsure.placed_units() == {c: u for c, u in want.items() if u.startswith("black")}
    # seed 3: white is two rooks and two queens; a rook and a queen in doubt leave the other
    # rook and queen of a kind in doubt too
    steps, first_round, sure, want = _set_up_read_right(seed=3)
    unsure, (_, c1), (_, c2) = _set_up_leaning_the_wrong_way(steps, first_round)
    q = next(q for q in unsure.questions if isinstance(q, PlacementQuestion))
    assert q.doubted() == {c1, c2}
    assert unsure.placed_units() == {c: u for c, u in want.items() if u.startswith("black")}


def _set_up_read_right(seed: int = 3) -> tuple[list, int, GameTracker, dict[str, str]]:
    """A recorded game's set-up read perfectly: (steps, the first round's step, the tracker
    after the set-up, cell -> the unit placed there)."""
    steps = record_game(seed)
    first_round = next(i for i, (a, _) in enumerate(steps) if a.split()[1] == "initiative")
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in frames_of(steps[:first_round], _empty(steps), seed=seed):
        tracker.update(frame)
    want = {a.split()[3]: f"{a.split()[0]}-{a.split()[2]}" for a, _ in steps[:first_round]
            if a.split()[1] == "place"}
    return steps, first_round, tracker, want


def test_placed_units_leave_out_a_side_whose_watched_placement_its_views_now_doubt():
    """A placement taken sure is watched; where its units' later views make another
    assignment a real rival (two units each read as the other's kind), the classifier must not
    learn the set from it. With a piece model fine-tuned in session 19, s64's black c5 was
    placed a king before a5 stood, a5 read a king too, and adapting from that swap cost 24
    moves."""
    from scanner.open_questions import PlacementQuestion

    _, _, tracker, want = _set_up_read_right()
    assert tracker.placed_units() == want
    q = next(q for q in tracker.questions
             if isinstance(q, PlacementQuestion) and q.side is Side.WHITE)
    assert q.watched and q.backed()
    kind_of = dict(zip(q.origins, q.chosen, strict=True))
    c1 = q.origins[0]
    c2 = next(c for c in q.origins if kind_of[c] != kind_of[c1])
    k1, k2 = kind_of[c1], kind_of[c2]
    q.add_view(c1, "a cell it moved to", {k1: 0.6, k2: 0.4})  # a little doubt: still backed
    assert q.backed() and tracker.placed_units() == want
    for look in range(3):  # then each seen firmly as the other's kind
        q.add_view(c1, f"cell {look}", {k2: 0.95, k1: 0.05})
        q.add_view(c2, f"cell {look}", {k1: 0.95, k2: 0.05})
    assert not q.backed() and q.doubted() == {c1, c2}
    # white is two rooks and two queens: its other two are of the kinds in doubt too
    assert tracker.placed_units() == {c: u for c, u in want.items() if u.startswith("black")}

def _stale_source_run(seed, two_candidates, as_kind=None):
    """A game read perfectly except that, after one unit's move, its old cell keeps reading as
    a piece of its side at 75 % (a face card's picture taken for a piece) until a card is
    laid there. With `two_candidates`, the move is one where another unit of its side stands
    next to where it went, read firmly. With `as_kind`, that other unit is of the mover's
    kind, and the old cell reads firmly (99 %) as a piece of kind `as_kind`, the mover's
    colour."""
    from engines.royal_battles.board import NEIGHBOURS
    from scanner.detections import PieceReading

    steps = record_game(seed)
    prev = steps[0][1]
    pick = None
    for i, (action, pos) in enumerate(steps):
        words = action.split()
        if words[1] == "move" and words[2].split("-")[0] != words[2].split("-")[1]:
            frm, to = words[2].split("-")
            side = words[0]
            mates = [c for c in NEIGHBOURS[parse_cell(to)]
                     if (prev["board"].get(_name(c)) or {}).get("unit", {}).get("side") == side]
            kind = prev["board"][frm]["unit"]["kind"]
            twins = [c for c in mates if prev["board"][_name(c)]["unit"]["kind"] == kind]
            if (len(mates) >= 2) == two_candidates and (
                    as_kind is None or (len(twins) >= 2 and kind != as_kind)):
                pick = (i, frm, prev["board"][frm]["unit"], prev["board"][frm]["cards"])
                break
        prev = pos
    assert pick is not None, "no such move in this game"
    i, frm, unit, cards = pick
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    tracker = GameTracker(armies)
    move_frame = len(frames_of(steps[:i], _empty(steps), seed=seed))
    for frame in frames_of(steps, _empty(steps), seed=seed):
        cell = frame.cells[frm]
        if frame.frame_index >= move_frame and not frame.occluded and cell.card is not None \
                and cell.card.card == cards[-1] and cell.piece.piece == "empty":
            cell.piece = PieceReading(f"{unit['side']}-{unit['kind']}", 0.75) \
                if as_kind is None else PieceReading(f"{unit['side']}-{as_kind}", 0.99)
        tracker.update(frame)
    return steps, tracker, steps[i][0]


def _name(cell):
    from engines.royal_battles import CELL_NAMES

    return CELL_NAMES[cell]


@pytest.mark.parametrize("seed,two", [(1, False), (2, False), (3, True), (5, True)])
def test_a_cell_still_read_occupied_after_its_unit_left_does_not_stall_the_game(seed, two):
    # session 15: an empty face card read as a lathe pawn at 75 % left "which white moved to
    # f1? candidates: none" on a held-out game, and every later move was lost
    steps, tracker, move = _stale_source_run(seed, two)
    texts = [e.text for e in tracker.events]
    assert move in texts, tracker.holding
    event = tracker.events[texts.index(move)]
    assert any("still read occupied" in f for f in event.flags)
    want = truth_events(steps)
    assert texts[:want.index(move) + 1] == want[:want.index(move) + 1]
    assert len(texts) >= want.index(move) + 10  # the game goes on past it


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_of_two_units_next_door_the_one_now_read_as_another_kind_moved(seed):
    # session 17, s42: a white pawn moved g1-g2 beside the other white pawn on f1; the KH it
    # left read as a white king at 99 % ("which white moved to g2? candidates: f1, g1"),
    # and the game was held from there
    steps, tracker, move = _stale_source_run(seed, True, "king")
    texts = [e.text for e in tracker.events]
    assert move in texts, tracker.holding
    want = truth_events(steps)
    assert texts[:want.index(move) + 1] == want[:want.index(move) + 1]
    assert len(texts) >= min(len(want), want.index(move) + 10)  # the game goes on past it


@pytest.mark.parametrize("seed,own", [(1, False), (2, False), (3, False), (1, True),
                                      (2, True), (3, True)])
def test_a_unit_read_not_firmly_as_the_other_side_is_its_side_s_unit(seed, own):
    # session 17, s51: a held-out black knight moved b5-b4 and read as a white knight at 53 %;
    # black's turn was taken as passed and white's rook, still on a4, as the mover. Later the
    # same knight covered its own card (`own`), read white again: 'white move a4-b4' refused
    from scanner.detections import PieceReading

    steps = record_game(seed)
    want = truth_events(steps)
    i = next(i for i, (a, _pos) in enumerate(steps) if a.split()[1] == "move"
             and (len(set(a.split()[2].split("-"))) == 1) == own and want.index(a) > 20)
    side, to = steps[i][0].split()[0], steps[i][0].split()[2].split("-")[1]
    other = "black" if side == "white" else "white"
    kind = steps[i][1]["board"][to]["unit"]["kind"]
    start = len(frames_of(steps[:i], _empty(steps), seed=seed))
    end = len(frames_of(steps[:i + 2], _empty(steps), seed=seed))

    def edit(frame):
        cell = frame.cells[to]
        if start <= frame.frame_index < end and cell.piece is not None \
                and cell.piece.piece == f"{side}-{kind}":
            cell.piece = PieceReading(f"{other}-{kind}", 0.53)

    tracker = _track(steps, seed, edit)
    texts = [e.text for e in tracker.events]
    assert texts == want, tracker.holding
    assert any("not firmly" in f for f in tracker.events[texts.index(steps[i][0])].flags)


def _removal_beside_a_bare_card(steps):
    """The first removal with a card and no unit next door: the attack's step, the removal's
    event, the cell it is taken off and that bare neighbour with its top card."""
    before = steps[0][1]
    for i, (action, pos) in enumerate(steps):
        gone = [c for c, e in before["board"].items() if e.get("unit") and not
                pos["board"].get(c, {}).get("unit")]
        if action.split()[1] == "attack" and gone:
            cell, unit = gone[0], before["board"][gone[0]]["unit"]
            bare = [n for n in (_name(c) for c in NEIGHBOURS[parse_cell(cell)])
                    if pos["board"].get(n, {}).get("cards") and not pos["board"][n].get("unit")]
            if bare:
                return (i, f"{unit['side']} {unit['kind']} removed {cell}", unit, bare[0],
                        pos["board"][bare[0]]["cards"][-1])
        before = pos
    raise AssertionError("no removal beside a bare card")


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("since,p", [(0, 0.78), (2, 0.99)])
def test_a_face_card_read_as_a_piece_beside_a_removal_does_not_hide_it(seed, since, p):
    """A card next door read as a piece like the one taken off: from the removal on, not
    firmly (session 17, s42: a black rook taken off d4 beside a plastic AC whose big pip read
    as a black rook at 78 % held the removal 130 frames), or firmly since before the events
    that came before it (session 18, s42: a QS and a KH read as white units for 100 frames
    beside a white pawn taken off)."""
    from scanner.detections import PieceReading

    steps = record_game(seed)
    want = truth_events(steps)
    at, removed, unit, phantom, top = _removal_beside_a_bare_card(steps)
    start = len(frames_of(steps[:at - since], _empty(steps), seed=seed))

    def edit(frame):
        cell_read = frame.cells[phantom]
        if frame.frame_index >= start and cell_read.card is not None \
                and cell_read.card.card == top and cell_read.piece.piece == "empty":
            cell_read.piece = PieceReading(f"{unit['side']}-{unit['kind']}", p)

    tracker = _track(steps, seed, edit)
    texts = [e.text for e in tracker.events]
    assert removed in texts, tracker.holding
    assert texts[:want.index(removed) + 1] == want[:want.index(removed) + 1]


def _refused_card_run(seed):
    """A game read perfectly, except one movement card, read sure as a card of the colour of
    the card it covers, which the rules refuse, for as long as it lies on top."""
    from engines.royal_battles.cards import parse_card

    steps = record_game(seed)
    for action, pos in steps:
        words = action.split()
        if words[1] == "move" and words[3] != "JK" and len(set(words[2].split("-"))) == 2:
            to = words[2].split("-")[1]
            cards = pos["board"][to]["cards"]
            if len(cards) >= 2 and cards[-2] != "JK" and not to.endswith(("1", "5")):
                break
    else:
        raise AssertionError("no such move")
    covered = parse_card(cards[-2])
    wrong = next(c for c in ("2S", "3S", "2H", "3H") if c[-1] in
                 (("S", "C") if covered.colour.value == "black" else ("H", "D")))
    def edit(frame):
        cell = frame.cells[to]
        if not frame.occluded and cell.card is not None and cell.card.card == cards[-1] \
                and frame.frame_index > 0:
            cell.card.card = wrong

    return steps, _track(steps, seed, edit), action


@pytest.mark.parametrize("seed", [1, 2, 6])
def test_a_game_that_parted_ways_with_the_table_is_re_read_from_it(seed):
    from scanner.evaluate import matched_in_order

    steps, tracker, missed = _refused_card_run(seed)
    want = truth_events(steps)
    got = [e.text for e in tracker.events if e.kind != "re-read"]
    re_reads = [e for e in tracker.events if e.kind == "re-read"]
    assert got[:want.index(missed)] == want[:want.index(missed)]  # all right up to the miss
    assert 1 <= len(re_reads) <= 3, [e.text for e in re_reads]
    assert all(e.flags for e in re_reads)
    # after the re-read the game is read on: most later moves are recovered
    later = want[want.index(missed) + 1:]
    assert matched_in_order(got, later) >= 0.7 * len(later), tracker.holding
    # the re-read is in the journal: the saved log replays to the same game
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


def _joker_read_as_a_jack_run(seed):
    """A game read perfectly, except one joker laid as a movement card, read sure for as long
    as it lies on top as a card of the colour of the card later laid on it (the held-out tango
    joker reads as a jack of diamonds at 99.99 %), which the rules take for the joker's move."""
    from engines.errors import RulesError
    from engines.royal_battles import parse_action
    from engines.royal_battles.position import from_json

    steps = record_game(seed)
    used = {a.split()[-1] for a, _pos in steps}
    laid: dict[str, int] = {}
    for i, (action, _pos) in enumerate(steps):
        words = action.split()
        if words[1] != "move":
            continue
        to = words[2].split("-")[1]
        if to in laid and words[3] != "JK" and steps[laid[to]][0].split()[3] == "JK":
            joker, cover = laid[to], action
            red = words[3][-1] in "HD"
            ranks = ("J", "Q", "K", "10", "9", "8", "7", "6", "5", "4", "3", "2")
            for wrong in [r + s for r in ranks
                          for s in (("D", "H") if red else ("C", "S")) if r + s not in used]:
                before = GameTracker(state=from_json(steps[joker - 1][1])).state  # hands unseen
                try:  # the misread is itself a legal move, as on s51
                    before.apply(parse_action(steps[joker][0].replace(" JK", f" {wrong}")))
                except RulesError:
                    continue
                break
            else:
                laid[to] = i
                continue
            break
        laid[to] = i
    else:
        raise AssertionError("no joker covered later")
    def edit(frame):
        cell = frame.cells.get(to)
        if cell is not None and cell.card is not None and cell.card.card == "JK":
            cell.card.card, cell.card.candidates = wrong, [(wrong, 0.9999)]

    return steps, _track(steps, seed, edit), steps[joker][0], cover, wrong


@pytest.mark.parametrize("seed", [12, 38, 51])  # 51: the fixture s51's very move
def test_a_card_laid_on_a_joker_read_as_a_jack_shows_the_joker_was_misread(seed):
    # session 17, s51: a held-out joker read as JD at 99.99 % was taken for JD; the QH laid on
    # it later was then taken for that JD misread (a red card can't cover a red one), the move
    # was never seen and the game stalled
    steps, tracker, joker_move, cover, wrong = _joker_read_as_a_jack_run(seed)
    texts = [e.text for e in tracker.events]
    assert joker_move in texts and cover in texts, tracker.holding
    joker_event = tracker.events[texts.index(joker_move)]
    assert any(f"read as {wrong}" in f for f in joker_event.flags)
    assert any("a joker" in f for f in tracker.events[texts.index(cover)].flags)
    assert texts == truth_events(steps), tracker.holding  # and the whole game
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


def _joker_left_read_as_another_run(seed, ranks=("J", "Q", "K", "10", "9", "8", "7", "6", "5",
                                                  "4", "3", "2")):
    """A recorded game with a joker laid by a move, which the unit on it later leaves for a
    cell next door with a card of some colour, the joker read sure as a card of that colour
    (one its deck never turns up, of `ranks`, the first that fits, and itself a legal move
    where the joker was laid): (steps, tracker, the joker's move, the move off it, the card
    read)."""
    from engines.errors import RulesError
    from engines.royal_battles import parse_action
    from engines.royal_battles.position import from_json

    steps = record_game(seed)
    jokers: dict[str, int] = {}  # cell -> the move that laid a joker on top there
    for i, (action, _pos) in enumerate(steps):
        words = action.split()
        if words[1] != "move":
            continue
        frm, to = words[2].split("-")
        if frm in jokers and frm != to and words[3] != "JK":
            joker = jokers[frm]
            red = words[3][-1] in "HD"
            mine = {a.split()[-1] for a, _pos in steps if a.split()[0] == words[0]}
            for wrong in [r + s for r in ranks
                          for s in (("D", "H") if red else ("C", "S")) if r + s not in mine]:
                before = GameTracker(state=from_json(steps[joker - 1][1])).state
                try:
                    before.apply(parse_action(steps[joker][0].replace(" JK", f" {wrong}")))
                except RulesError:
                    continue
                cell = frm

                def edit(frame, cell=cell, wrong=wrong):
                    c = frame.cells.get(cell)
                    if c is not None and c.card is not None and c.card.card == "JK":
                        c.card.card, c.card.candidates = wrong, [(wrong, 0.9999)]

                return steps, _track(steps, seed, edit), steps[joker][0], action, wrong
        jokers.pop(to, None)
        if words[3] == "JK":
            jokers[to] = i
    raise AssertionError("no joker left for a cell next door")


@pytest.mark.parametrize("seed", [7, 12, 21])
def test_a_move_off_a_joker_read_as_another_card_shows_the_joker_was_misread(seed):
    # v5-s227: white's bishop stood on a joker read QD sure and left it for b2 with an AD; a
    # red card can't be laid from a red standing card, so the move was refused and the
    # table re-read, where the joker, with no colour, explains it
    steps, tracker, joker_move, left, wrong = _joker_left_read_as_another_run(seed)
    texts = [e.text for e in tracker.events]
    assert joker_move in texts and left in texts, tracker.holding
    assert any(f"read as {wrong}, but the move off it" in f
               for f in tracker.events[texts.index(joker_move)].flags)
    assert any(f"the {wrong} it left was read wrong" in f
               for f in tracker.events[texts.index(left)].flags)
    assert texts == truth_events(steps), tracker.holding  # and the whole game
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


@pytest.mark.parametrize("seed", [7, 12, 25])
def test_a_number_card_refusing_the_move_off_it_is_not_taken_for_a_joker(seed):
    # session 50: the readers take jokers for courts, never for number cards (118 looks at a
    # joker read sure as another card in the 78 recorded games, all courts); a number card
    # the move off it can't be made from said the game was out of step (v7-s307: a 2H read
    # 3H, v6-s257: a 6H), and rewriting it to a joker hid that: 40/93 -> 50/93 moves there
    steps, tracker, joker_move, left, wrong = _joker_left_read_as_another_run(
        seed, ranks=("10", "9", "8", "7", "6", "5", "4", "3", "2"))
    assert wrong[:-1] not in ("J", "Q", "K")
    texts = [e.text for e in tracker.events]
    assert joker_move.replace(" JK", f" {wrong}") in texts  # as read
    assert not any("could only be made from a joker" in f or "it left was read wrong" in f
                   for e in tracker.events for f in e.flags)


@pytest.mark.parametrize("seed", [12, 38, 51])
def test_a_card_laid_over_a_joker_the_game_went_on_without_is_seen_laid(seed):
    # val-s35: a joker laid read as a jack at 78 % (the joker 21 %): the game went on with the
    # jack, an open question; the card of the jack's colour later laid over it, read sure,
    # was taken for that jack misread (a card can't cover one of its colour), so the move
    # onto it was never seen and the unit's removal there came out on the wrong cell
    steps, _sure, joker_move, cover, wrong = _joker_read_as_a_jack_run(seed)
    to = joker_move.split()[2].split("-")[1]

    def edit(frame):
        cell = frame.cells.get(to)
        if cell is not None and cell.card is not None and cell.card.card == "JK":
            cell.card.card, cell.card.candidates = None, [(wrong, 0.78), ("JK", 0.21)]

    tracker = _track(steps, seed, edit)
    texts = [e.text for e in tracker.events]
    assert cover in texts, tracker.holding
    joker_event = next(e for e in tracker.events if e.text == joker_move)
    assert joker_event.question and "going on with JK" in joker_event.question
    assert texts == truth_events(steps), tracker.holding  # and the whole game
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


def _joker_the_rules_named_run(seed):
    """A game read perfectly, except one joker laid as a movement card: unsure under its unit
    (a card the rules refuse there, then the joker), then, bare once its unit has moved on,
    read sure as that refused card for as long as it lies on top."""
    from engines.errors import RulesError
    from engines.royal_battles import parse_action
    from engines.royal_battles.position import from_json

    steps = record_game(seed)
    used = {a.split()[-1] for a, _pos in steps}
    ranks = ("J", "Q", "K", "10", "9", "8", "7", "6", "5", "4", "3", "2")
    for i, (action, _pos) in enumerate(steps):
        words = action.split()
        if words[1] != "move" or words[3] != "JK":
            continue
        to = words[2].split("-")[1]
        left = next((j for j in range(i + 1, len(steps)) if not steps[j][1]["board"][to].get(
            "unit")), None)
        if left is None or steps[left][1]["board"][to]["cards"][-1] != "JK":
            continue  # (its unit never leaves, or leaves by covering it)
        before = GameTracker(state=from_json(steps[i - 1][1])).state  # hands unseen
        for wrong in [r + s for r in ranks for s in "DHCS" if r + s not in used]:
            try:
                before.copy().apply(parse_action(action.replace(" JK", f" {wrong}")))
            except RulesError:
                break  # the rules refuse the misread: they name the joker
        else:
            continue
        break
    else:
        raise AssertionError("no joker left bare by its unit")
    def edit(frame):
        cell = frame.cells.get(to)
        if cell is not None and cell.card is not None and cell.card.card == "JK":
            if cell.piece is not None and cell.piece.piece != "empty":
                cell.card.card, cell.card.candidates = None, [(wrong, 0.9), ("JK", 0.0999)]
            else:
                cell.card.card, cell.card.candidates = wrong, [(wrong, 0.9999)]

    return steps, _track(steps, seed, edit), action, wrong


@pytest.mark.parametrize("seed", [7, 12, 28, 33])
def test_a_joker_the_rules_named_is_not_news_when_its_unit_leaves(seed):
    # session 17, s51: a held-out joker under a unit read JD at 91 %, laid as JK by the colour
    # rule; once its unit left, its bare look read JD at 99.99 %, stood as a card laid next
    # door and kept the removal beside it from being seen
    steps, tracker, joker_move, wrong = _joker_the_rules_named_run(seed)
    texts = [e.text for e in tracker.events]
    assert joker_move in texts, tracker.holding
    assert texts == truth_events(steps), tracker.holding


@pytest.mark.parametrize("seed", [1, 2, 3, 5])
def test_a_look_the_rules_explained_is_not_news_while_its_pixels_stay(seed):
    """s51: a held-out joker under a rook read as JD at 99 %; the rules refused JD there and
    went on with JK. The same look, frame after frame, was then news again: at white's next
    move the stale read became 'f2-f2 JD', a card nobody laid. Here the first movement card
    reads 90 % as its twin of the other colour (which the rules refuse) for the whole game,
    pixels unchanged after it was laid: the game is read as played."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    _frm, cell, code = next(  # the first move to another cell (a unit seen to arrive)
        (w[2].split("-")[0], w[2].split("-")[1], w[3]) for w in (a.split() for a, _ in steps)
        if w[1] == "move" and w[3] != "JK" and w[2].split("-")[0] != w[2].split("-")[1])
    twin = code[:-1] + TWIN_OTHER_COLOUR[code[-1]]
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    tracker = GameTracker(armies)
    last, piles = None, {}
    for frame in frames_of(steps, _empty(steps), seed=seed):
        c = frame.cells.get(cell)
        now = c.card.card if c is not None and c.card is not None else None
        # the incremental scanner's report: the cell's pixels change when its card does (and
        # a pile's when a new initiative card is laid on it)
        frame.changed = ({cell} if now != last or frame.occluded else set()) \
            | _piles_changed(frame, piles)
        last = now
        if now == code and not frame.occluded:
            c.card = CardReading(card=None, confidence=0.9,
                                 candidates=[(twin, 0.9), (code, 0.08)])
        tracker.update(frame)
    want = truth_events(steps)
    got = [e.text for e in tracker.events]
    assert got == want, tracker.holding



def test_a_unit_seen_gone_before_the_last_move_is_not_the_one_that_moved():
    # session 16: s42's two black rooks, one taken off at d4 (not seen as such) well before
    # the other moved to e4: "which black moved to e4? candidates: d4, e5" held the game to
    # its end. The one whose cell was already empty when the last move was read is the one
    # taken off; where both (or neither) went after it, it stays the players' question.
    from scanner.tracker import TableEvent

    steps = record_game(1)
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    tracker.events = [TableEvent(640, "white move c4-c4 KS", "move"),
                      TableEvent(708, "black move a5-a4 2S", "move"),
                      TableEvent(788, "white move a5-a5 JK", "move")]  # this same frame
    tracker._gone_since = {"d4": 700, "e5": 760}
    assert tracker._left_with_the_move(["d4", "e5"], 788) == (["e5"], ["d4"])
    tracker._gone_since = {"d4": 720, "e5": 760}  # both left after the last move
    assert tracker._left_with_the_move(["d4", "e5"], 788) == (["d4", "e5"], [])
    tracker._gone_since = {"d4": 600, "e5": 650}  # both before: nothing to go by
    assert tracker._left_with_the_move(["d4", "e5"], 788) == (["d4", "e5"], [])


def _unit_read_late_run(seed, steps_unsure, until_it_leaves=False, as_empty=False):
    """A game read perfectly except that after the first move of a round that the other side
    answers with a move, the mover's piece on its new card reads unsure (a hand's shadow, a
    piece the classifier can't place) for that step and `steps_unsure` - 1 visible steps
    more: the card is seen long before the unit on it. With `until_it_leaves`, it is never
    read there: unsure until the cell reads empty. With `as_empty`, read empty (85 %) instead
    of unsure."""
    from scanner.detections import PieceReading
    from tests.tracker_sim import VISIBLE

    steps = record_game(seed)
    visible = [i for i, (a, _p) in enumerate(steps) if a.split()[1] in VISIBLE + ("attack",)]
    pick = None
    for n, i in enumerate(visible[:-steps_unsure]):
        words, after = steps[i][0].split(), steps[visible[n + 1]][0].split()
        if words[1] == "move" and words[2].split("-")[0] != words[2].split("-")[1] \
                and after[1] == "move" and after[0] != words[0]:
            pick = (i, visible[n + steps_unsure - 1], words[2].split("-")[1])
            break
    assert pick is not None, "no such move in this game"
    i, last, to = pick
    first = len(frames_of(steps[:i], _empty(steps), seed=seed))
    end = len(frames_of(steps[:last + 1], _empty(steps), seed=seed))
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    misread = PieceReading("empty", 0.85) if as_empty else PieceReading(None, 0.99)
    left = False
    for frame in frames_of(steps, _empty(steps), seed=seed):
        cell = frame.cells[to]
        if frame.frame_index >= first and not frame.occluded and until_it_leaves:
            left = left or (cell.piece is not None and cell.piece.piece == "empty")
            if not left and cell.piece is not None:
                cell.piece = misread
        elif first <= frame.frame_index < end and not frame.occluded:
            cell.piece = misread
        tracker.update(frame)
    return steps, tracker, steps[i][0]


@pytest.mark.parametrize("seed,steps_unsure", [(1, 2), (2, 2), (3, 3), (4, 3)])
def test_a_move_whose_unit_is_read_late_stays_before_the_answer_and_the_next_round(
        seed, steps_unsure):
    # session 20, s42 with mirror-read pieces: a white king's move to b5 was seen as its card
    # alone (the piece unsure) until black had answered and the next initiative cards lay;
    # white's turn was taken as passed and its move recorded in the next round
    steps, tracker, move = _unit_read_late_run(seed, steps_unsure)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding
    assert move in [e.text for e in tracker.events]


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("as_empty", [False, True])
def test_a_unit_never_read_on_the_card_it_moved_to_is_taken_as_the_unit_gone_next_door(
        seed, as_empty):
    # session 20, val-s58: a brutalchess pawn on a nicu joker read unsure for 45 frames, then
    # moved on; waiting for it held the game from there ("which white moved to e4?"); val-s35:
    # a paper queen on the KC it moved to read empty at 83-86 %
    steps, tracker, move = _unit_read_late_run(seed, 1, until_it_leaves=True,
                                               as_empty=as_empty)
    texts = [e.text for e in tracker.events]
    assert texts == truth_events(steps), tracker.holding
    event = tracker.events[texts.index(move)]
    assert any("not read: taken as" in f for f in event.flags)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_a_unit_read_empty_on_the_card_it_covered_is_taken_as_still_there(seed):
    # session 20, val-s23: a dreamchess pawn that covered its own card with QH read empty at
    # 93 % from then on; the move was never taken and the game fell behind
    from scanner.detections import PieceReading
    from tests.tracker_sim import VISIBLE

    steps = record_game(seed)
    visible = [i for i, (a, _p) in enumerate(steps) if a.split()[1] in VISIBLE + ("attack",)]
    pick = next(i for i in visible if steps[i][0].split()[1] == "move"
                and len(set(steps[i][0].split()[2].split("-"))) == 1)
    move = steps[pick][0]
    cell, label = move.split()[2].split("-")[0], None
    first = len(frames_of(steps[:pick], _empty(steps), seed=seed))
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in frames_of(steps, _empty(steps), seed=seed):
        piece = frame.cells[cell].piece
        if frame.frame_index >= first and not frame.occluded and piece is not None:
            label = label or piece.piece
            if piece.piece != label:
                label = "gone"  # the unit left or was taken off: read as it is from then on
            if label != "gone":
                frame.cells[cell].piece = PieceReading("empty", 0.9)
        tracker.update(frame)
    texts = [e.text for e in tracker.events]
    assert texts == truth_events(steps), tracker.holding
    event = tracker.events[texts.index(move)]
    assert any("covering its own card" in f for f in event.flags)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_unit_never_seen_on_its_set_up_card_is_placed_once_initiative_cards_lie(seed):
    # session 20, val-s35 with session 19's piece reader: a paper token never seen on its
    # set-up card left "waiting for white to place a unit" for the whole game
    from scanner.detections import PieceReading

    steps = record_game(seed)
    place = next(a for a, _p in steps if a.split()[:2] == ["white", "place"])
    cell, label = place.split()[3], "white-" + place.split()[2]
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    stood = left = False  # the unit seen standing there (truth), then gone from there
    for frame in frames_of(steps, _empty(steps), seed=seed):
        piece = frame.cells[cell].piece
        if piece is not None and not frame.occluded:
            stood = stood or piece.piece == label
            left = left or (stood and piece.piece != label)
            if stood and not left:  # read empty, not firmly, all the while it stands there
                frame.cells[cell].piece = PieceReading("empty", 0.85)
        tracker.update(frame)
    texts, want = [e.text for e in tracker.events], truth_events(steps)
    assert place in texts, tracker.holding
    # the game goes on from set-up: its first rounds as they were played (the unit never seen
    # is placed last among its side's, whenever it was put down)
    first_move = next(i for i, t in enumerate(want) if t.split()[1] == "move")
    assert sorted(texts[:first_move + 8]) == sorted(want[:first_move + 8]), tracker.holding


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_card_read_only_as_cards_the_rules_refuse_goes_on_with_one_of_its_rank(seed):
    # session 20, val-s7: a KD under a rook read JS, JC or JD, JD already laid and the others
    # the standing card's colour: "no usable reading" held the move until the game parted
    # ways with the table. Once the table moves on, an allowed card of the rank read stands
    # in as an open question, and the game goes on.
    from scanner.detections import CardReading

    steps = record_game(seed)
    prev, pick = steps[0][1], None
    for i, (action, pos) in enumerate(steps):
        words = action.split()
        # (a pip card: a court read only in a refused colour goes on as the joker first)
        if words[1] == "move" and words[2].split("-")[0] != words[2].split("-")[1] \
                and words[3] != "JK" and words[3][:-1] not in ("J", "Q", "K"):
            frm, to = words[2].split("-")
            standing = prev["board"][frm]["cards"][-1]
            if standing != "JK":
                black = standing[-1] in "SC"
                refused = words[3][:-1] + ("C" if black else "D")  # the standing card's colour
                pick = (i, to, refused)
                break
        prev = pos
    assert pick is not None
    i, to, refused = pick
    move = steps[i][0]
    first = len(frames_of(steps[:i], _empty(steps), seed=seed))
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in frames_of(steps, _empty(steps), seed=seed):
        cell = frame.cells[to]
        # read so for as long as that card lies on top there
        if frame.frame_index >= first and not frame.occluded and cell.card is not None \
                and cell.card.card == move.split()[3]:
            cell.card = CardReading(card=None, confidence=0.5, candidates=[(refused, 0.99)])
        tracker.update(frame)
    texts = [e.text for e in tracker.events]
    moved = [t for t in texts if t.startswith(" ".join(move.split()[:3]) + " ")]
    assert moved, tracker.holding
    assert moved[0].split()[3][:-1] == move.split()[3][:-1]  # the rank read
    assert len(texts) >= texts.index(moved[0]) + 10  # the game goes on past it


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_a_unit_of_the_side_to_move_gone_beside_an_unread_new_card_is_on_its_way(seed):
    # session 21, val-s47: a queen lifted off g1 toward the orell joker just laid on g2, a
    # picture no reader leans on, was taken off the board; only the enemy's attack takes a
    # unit off, so a unit of the side yet to move gone beside a new card is moving there
    from scanner.detections import CardReading, PieceReading
    from tests.tracker_sim import reading_of

    steps = record_game(seed)
    i = next(i for i, (a, _p) in enumerate(steps) if a.split()[1] == "move"
             and len(set(a.split()[2].split("-"))) == 2)
    move, after = steps[i]
    frm, to = move.split()[2].split("-")
    before = frames_of(steps[:i], _empty(steps), seed=seed)
    rest = frames_of(steps, _empty(steps), seed=seed)[len(before):]
    lifted = []
    for k in range(8):  # the card lies, unread; the unit is in the player's hand
        frame = reading_of(after, len(before) + k)
        frame.cells[to].card = CardReading(card=None, confidence=0.3, candidates=[
            ("2C", 0.3), ("7D", 0.25), ("QH", 0.2)])
        frame.cells[to].piece = PieceReading("empty", 1.0, occupied=False)
        lifted.append(frame)
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in before + lifted + rest:
        tracker.update(frame)
    texts = [e.text for e in tracker.events]
    assert not any(t.endswith(f"removed {frm}") for t in texts if t not in truth_events(steps))
    assert texts == truth_events(steps), tracker.holding


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_a_look_spoilt_while_a_side_moved_elsewhere_is_not_its_next_movement_card(seed):
    # session 21, val-s47: while white moved a pawn from e1 to f2, the hand spoilt the look of
    # the joker under white's queen on g2 (read JC at 60 % from then on); once the next
    # round's initiative cards lay, that look was taken for white's move, covering its own
    # card, a round before its real one. One card a turn: that turn's card was f2's.
    from scanner.detections import CardReading

    steps = record_game(seed)
    moves = [(i, a.split()[0], a.split()[2].split("-")) for i, (a, _p) in enumerate(steps)
             if a.split()[1] == "move"]
    pick = None
    for k, (i, side, cells) in enumerate(moves):
        if pick or cells[0] == cells[1] or not any(m[1] == side for m in moves[:k]):
            continue  # a unit that moved to another cell; a side's turn after one it moved in
        j, _s, cells2 = next((m for m in moves[k + 1:] if m[1] == side), (None, None, None))
        if j is None:
            continue
        for cell, v in sorted(steps[i][1]["board"].items()):
            # (after the move's cell, as g2 came after f2: of two cards seen laid at once the
            # tracker tries them in cell order, and this is about the next turn)
            if (v.get("unit") or {}).get("side") == side and cell not in cells + cells2 \
                    and cell > cells[1] \
                    and v["cards"][-1] != "JK" \
                    and all(steps[t][1]["board"].get(cell) == v for t in range(i, j + 1)):
                pick = (i, j, cell, v["cards"][-1])
                break
    assert pick is not None
    i, j, cell, standing = pick
    other = ("JC", "QC") if standing[-1] in "HD" else ("JH", "QH")
    start = len(frames_of(steps[:i], _empty(steps), seed=seed))
    end = len(frames_of(steps[:j + 1], _empty(steps), seed=seed))
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in frames_of(steps, _empty(steps), seed=seed):
        if start <= frame.frame_index < end and not frame.occluded:
            frame.cells[cell].card = CardReading(card=None, confidence=0.6, candidates=[
                (other[0], 0.6), (other[1], 0.25), (standing, 0.1)])
        tracker.update(frame)
    texts, want = [e.text for e in tracker.events], truth_events(steps)
    assert texts == want, tracker.holding


def _removal_before_a_new_round(steps):
    """The first attack that takes a unit off with both of the next round's initiative cards
    right after it: (attack step, second initiative step, cell, unit)."""
    for a, (action, pos) in enumerate(steps):
        if action.split()[1] != "attack":
            continue
        before = steps[a - 1][1]["board"]
        gone = [c for c, e in before.items() if e.get("unit") and not pos["board"][c].get("unit")]
        later = [i for i in range(a + 1, len(steps)) if steps[i][0].split()[1] in
                 ("initiative", "move", "place", "attack")]
        if gone and len(later) >= 2 and all(steps[i][0].split()[1] == "initiative"
                                           for i in later[:2]):
            return a, later[1], gone[0], before[gone[0]]["unit"]
    raise AssertionError("no removal right before a new round")


@pytest.mark.parametrize("seed", [1, 2, 3, 5])
def test_a_removal_seen_after_the_next_round_s_cards_is_logged_before_them(seed):
    # val-s23: a queen's blast took two units off; they were seen gone only after both
    # piles' new cards (the piece reads lagged), and the log put the removals in the new
    # round, where no attack had happened yet
    from scanner.detections import PieceReading

    steps = record_game(seed)
    attack, second_draw, cell, unit = _removal_before_a_new_round(steps)
    start = len(frames_of(steps[:attack], _empty(steps), seed=seed, settle=6))
    # still read there through the hands and the first two settled frames of the second card
    end = len(frames_of(steps[:second_draw], _empty(steps), seed=seed, settle=6)) + 2 + 2

    def edit(frame):
        if start <= frame.frame_index < end and not frame.occluded:
            frame.cells[cell].piece = PieceReading(f"{unit['side']}-{unit['kind']}", 0.99)

    tracker = _track(steps, seed, edit, settle=6)
    texts = [e.text for e in tracker.events]
    removed = f"{unit['side']} {unit['kind']} removed {cell}"
    gone_at = next(e.frame for e in tracker.events if e.text == removed)
    # seen gone no sooner than the second card was seen
    assert max(e.frame for e in tracker.events if e.kind == "initiative"
               and e.frame <= gone_at) >= end - 4
    assert texts == truth_events(steps), tracker.holding
    assert to_json(replay_journal(tracker.log_json())) == to_json(tracker.state)


def _first_removal(steps):
    """The first attack that takes a unit off: (step, cell)."""
    for a, (action, pos) in enumerate(steps):
        if action.split()[1] != "attack":
            continue
        before = steps[a - 1][1]["board"]
        gone = [c for c, e in before.items() if e.get("unit") and not pos["board"][c].get("unit")]
        if gone:
            return a, gone[0]
    raise AssertionError("no removal")


@pytest.mark.parametrize("seed", [1, 2, 4, 5])
def test_a_removal_whose_bare_card_reads_unsure_is_seen(seed):
    # val-s58: the JC under a king taken off read JK 55 % once bare; taken for a card laid,
    # it held the game's last removal to the end
    from scanner.detections import CardReading

    steps = record_game(seed)
    attack, cell = _first_removal(steps)
    top = steps[attack][1]["board"][cell]["cards"][-1]
    start = len(frames_of(steps[:attack], _empty(steps), seed=seed))

    def edit(frame):
        read = frame.cells.get(cell)
        if frame.frame_index >= start and read is not None and read.card is not None \
                and read.card.card == top and read.piece.piece == "empty":
            read.card = CardReading(card=None, candidates=[("JK", 0.55), (top, 0.25)])

    tracker = _track(steps, seed, edit)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


def _bare_card_beside_a_removal(steps):
    """A removal and a card next door that lies bare and unchanged from two events before it
    on: (attack step, that card's cell, its card, the step it is watched from)."""
    visible = ("move", "initiative", "place", "setup")
    for a, (action, pos) in enumerate(steps):
        if action.split()[1] != "attack":
            continue
        before = steps[a - 1][1]["board"]
        gone = [c for c, e in before.items() if e.get("unit") and not pos["board"][c].get("unit")]
        if not gone:
            continue
        since = [i for i in range(a) if steps[i][0].split()[1] in visible][-2]
        for n in (CELL_NAMES[c] for c in NEIGHBOURS[parse_cell(gone[0])]):
            cards = [steps[i][1]["board"].get(n, {}).get("cards", []) for i in range(since, a + 1)]
            units = [steps[i][1]["board"].get(n, {}).get("unit") for i in range(since, a + 1)]
            if cards[0] and all(c == cards[0] for c in cards) and not any(units):
                return a, n, cards[0][-1], since
    raise AssertionError("no bare card beside a removal")


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_bare_card_read_unsure_since_before_the_last_event_does_not_hide_a_removal(seed):
    # val-s7: two bare cards whose units had left read unsure for good; beside the game's
    # last removal they were taken for a card just laid, its unit on the way, and the
    # removal was never seen
    from scanner.detections import CardReading

    steps = record_game(seed)
    attack, cell, top, since = _bare_card_beside_a_removal(steps)
    start = len(frames_of(steps[:since], _empty(steps), seed=seed))

    def edit(frame):
        read = frame.cells.get(cell)
        if frame.frame_index >= start and read is not None and read.card is not None \
                and read.card.card == top:
            read.card = CardReading(card=None, candidates=[("JK", 0.6), (top, 0.3)])

    tracker = _track(steps, seed, edit)
    want = truth_events(steps)
    texts = [e.text for e in tracker.events]
    removals = [e for e in want if " removed " in e]
    assert removals and all(r in texts for r in removals), tracker.holding
    assert texts == want, tracker.holding



def test_a_units_views_from_many_cells_are_tempered():
    """A set seen in one light can be misread alike from every cell (val-s58: a brutalchess
    king and queen from above, read as each other at 17 later views): four views of each unit
    leaning 70/30 leave the placement asked, where as independent witnesses they would have
    settled it at 99.9 %."""
    from scanner.observations import SWITCH
    from scanner.open_questions import PlacementQuestion

    q = PlacementQuestion(Side.WHITE, ["c1", "e1"], [("king", "queen"), ("queen", "king")],
                           [], [], None, chosen=("king", "queen"))
    for i in range(4):
        q.add_view("c1", f"cell {i}", {"queen": 0.7, "king": 0.3})
        q.add_view("e1", f"cell {i}", {"king": 0.7, "queen": 0.3})
    (best, p), _ = q.ranked()
    assert best == ("queen", "king") and 0.9 < p < SWITCH


def test_an_open_placement_asks_only_the_units_in_doubt_and_their_removals():
    from scanner.open_questions import PlacementQuestion
    from scanner.tracker import TableEvent

    steps = record_game(3)
    first_round = next(i for i, (a, _) in enumerate(steps) if a.split()[1] == "initiative")
    tracker, (k1, c1), (k2, c2) = _set_up_leaning_the_wrong_way(steps, first_round, lean=0.5)
    q = next(q for q in tracker.questions if isinstance(q, PlacementQuestion))
    assert q.doubted() == {c1, c2}
    sure = next(c for c in q.origins if c not in (c1, c2))
    gone = {c: TableEvent(100, f"white {k} removed d3", "removed") for c, k in
            ((c1, k1), (sure, "rook"))}
    tracker._removals += [(e, Side.WHITE, c) for c, e in gone.items()]
    tracker._ask(q)
    assert gone[c1].question and "stands where" in gone[c1].question
    assert gone[sure].question is None
    asked = {e.text.split()[-1] for e in tracker.events if e.kind == "place" and e.question}
    assert asked == {c1, c2}
    tracker._settle(q, q.ranked()[0][0], "a player said so")
    assert gone[c1].question is None


def test_a_card_question_says_so_when_none_of_its_looks_can_lie_there():
    """val-s35: a pile's card read QS 47 % or JC 41 %, both seen elsewhere later: the game
    went on with another card, and the question listed nothing ("it looks like: ")."""
    from scanner.observations import CardEvidence
    from scanner.open_questions import CardQuestion
    from scanner.tracker import TableEvent

    ev = CardEvidence()
    ev.add([("QS", 0.47), ("JC", 0.41)])

    def question(answers: list[str]) -> CardQuestion:
        return CardQuestion("init.black", "black's initiative pile",
                             TableEvent(1, "black initiative 3H", "initiative"), 0, None,
                             answers, ev, answers[0])

    assert "it looks like: QS 53%, JC 46%" in question(["QS", "JC", "3H"]).describe()
    said = question(["3H", "4H"]).describe()
    assert "going on with 3H; it looked like QS 47%, JC 41%" in said
    assert said.endswith("none of which can lie there now")
    assert question(["3H"]).describe().count("it looks like") == 0
    empty = CardQuestion("init.black", "black's initiative pile",
                          TableEvent(1, "black initiative 3H", "initiative"), 0, None, ["3H"],
                          CardEvidence(), "3H")
    assert empty.describe().endswith("the camera could not read it")


def _reply_after_a_move(seed, reach):
    """A move to another cell whose next visible step is the enemy's move, also to another
    cell, the first mover reaching (or not) the cell the enemy's unit leaves: (move step,
    reply step)."""
    from scanner.tracker_removal import _reaches

    steps = record_game(seed)
    shown = [i for i, (a, _p) in enumerate(steps)
             if a.split()[1] in ("setup", "place", "initiative", "move")]
    for i, j in itertools.pairwise(shown):
        (a, pos), b = steps[i], steps[j][0]
        if a.split()[1] != "move" or b.split()[1] != "move" or a.split()[0] == b.split()[0]:
            continue
        frm, to = a.split()[2].split("-")
        frm2, to2 = b.split()[2].split("-")
        kind = pos["board"][to]["unit"]["kind"]
        if frm != to and frm2 != to2 and _reaches(kind, parse_cell(to), parse_cell(frm2)) == reach:
            return i, j
    raise AssertionError("no such pair of moves")


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_move_read_empty_until_the_enemy_lays_its_card_is_taken_before_it(seed):
    # session 29, xv-s83: a paper token on the 10D it moved to read firmly empty for 30 frames,
    # until black laid its own card; white's turn was taken as passed and its move logged a
    # round late. A unit leaves its cell only by moving or by the enemy's attack, and the
    # enemy has not moved yet: the one card laid beside the one unit gone is its move.
    from scanner.detections import PieceReading

    steps = record_game(seed)
    i, j = _reply_after_a_move(seed, reach=False)
    to = steps[i][0].split()[2].split("-")[1]
    start = len(frames_of(steps[:i], _empty(steps), seed=seed))
    end = len(frames_of(steps[:j + 1], _empty(steps), seed=seed))

    def token_read_empty(frame):
        if start <= frame.frame_index < end and not frame.occluded:
            frame.cells[to].piece = PieceReading("empty", 1.0, occupied=False)

    tracker = _track(steps, seed, edit=token_read_empty)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


@pytest.mark.parametrize("seed", [1, 2, 5, 8])
def test_a_unit_lifted_as_its_card_is_laid_is_moving_though_a_move_was_logged_with_it(seed):
    # session 29, xv-s83: white's move was logged only when black's next card lay (its token
    # read empty until then), in the same look that saw black's pawn lifted off e3 toward
    # that card; the pawn was taken off as hit by white's mover, and its move was lost. A
    # unit seen gone together with a card laid beside it is on its way there.
    from scanner.detections import PieceReading

    steps = record_game(seed)
    i, j = _reply_after_a_move(seed, reach=True)
    side2 = steps[j][0].split()[0]
    to = steps[i][0].split()[2].split("-")[1]
    frm2, to2 = steps[j][0].split()[2].split("-")
    start = len(frames_of(steps[:i], _empty(steps), seed=seed))
    before = frames_of(steps[:j], _empty(steps), seed=seed)
    for frame in before[start:]:
        if not frame.occluded:
            frame.cells[to].piece = PieceReading("empty", 1.0, occupied=False)
    lifted_pos = {**steps[j][1], "board": {**steps[j][1]["board"],
                                           to2: {**steps[j][1]["board"][to2]}}}
    lifted_pos["board"][to2].pop("unit")
    lifted = []
    for k in range(6):  # the enemy's card lies, its unit in the player's hand
        frame = reading_of(lifted_pos, len(before) + k)
        frame.cells[to].piece = PieceReading(None, 0.5)  # the token half seen again
        lifted.append(frame)
    assert steps[j][1]["board"][to2]["unit"]["side"] == side2
    rest = frames_of(steps, _empty(steps), seed=seed)[len(before):]
    for k, frame in enumerate(rest):
        frame.frame_index = len(before) + len(lifted) + k
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in before + lifted + rest:
        tracker.update(frame)
    texts = [e.text for e in tracker.events]
    assert f"{side2} " not in " ".join(t for t in texts if t.endswith(f"removed {frm2}")
                                       and t not in truth_events(steps))
    assert texts == truth_events(steps), tracker.holding


@pytest.mark.parametrize("seed", [2, 3, 4, 5, 6, 12])
def test_a_look_that_names_mostly_cards_that_can_t_lie_there_settles_no_question(seed):
    # session 29, xv-s71: a knight's 9S read 90 % 9S, 10 % 9C, where the rules allowed only
    # red cards (the covered card's colour misbelieved); weighed over the cards allowed or held
    # by open questions alone, its 10 % for 9C became 98 %, and the question on a4, rightly
    # going on with 9C (read 90 %), was settled to 9S: a wrong card logged as sure. Such a
    # look (a suit read as its twin, or a place misbelieved) may make a question go on with
    # another answer, still asked, but settles none.
    from scanner.table_events import TWIN_SUIT

    steps = record_game(seed)
    i, cell, code = _first_move(steps)
    j, later_cell, later = _later_same_colour_move(steps, i)
    side = steps[i][0].split()[0]
    home = "1" if side == "white" else "5"
    used = next(v["cards"][0] for c, v in sorted(steps[i][1]["board"].items())
                if c.endswith(home) and v["cards"][0] not in (code, later, "JK"))
    twin = code[:-1] + TWIN_SUIT[code[-1]]
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in frames_of(steps[:j + 1], _empty(steps), seed=seed):
        _blur_card(frame, cell, code, [(code, 0.85), (twin, 0.15)])
        _blur_card(frame, later_cell, later, [(used, 0.9), (code, 0.1)])  # a set-up card's
        tracker.update(frame)
    first = next(e for e in tracker.events if e.kind == "move")
    assert not any("seen elsewhere" in f for f in first.flags)
    assert first.text == steps[i][0] or first.question, [e.text for e in tracker.events]


def test_reads_of_courts_none_allowed_make_the_joker_the_card_left():
    # session 29, xv-s111: an orell joker under a rook read QD, JH or KD, none of them
    # allowed there; with no allowed card of a rank read, the game waited to its end. The
    # readers tell a picture from pips far better than they name an unseen design's joker.
    from scanner.observations import CardEvidence
    from scanner.open_questions import of_the_rank_read

    courts = CardEvidence()
    courts.add([("QD", 0.74), ("JH", 0.07), ("KD", 0.07)])
    low_black = {"2C", "3C", "3S", "4S", "5C", "7S"}
    assert of_the_rank_read(courts, low_black | {"JK"}) == "JK"
    assert of_the_rank_read(courts, low_black) is None
    # a card of a rank and colour read first; one of another colour only without the joker
    # (the readers tell red from black far better than ranks apart)
    assert of_the_rank_read(courts, low_black | {"QH", "JK"}) == "QH"
    assert of_the_rank_read(courts, low_black | {"QS", "JK"}) == "JK"
    assert of_the_rank_read(courts, low_black | {"QS"}) == "QS"
    pips = CardEvidence()
    pips.add([("9D", 0.6), ("8H", 0.3)])
    assert of_the_rank_read(pips, low_black | {"JK"}) is None


def test_reads_of_no_rank_allowed_go_on_with_a_card_of_the_colour_read():
    # session 39, v8-s337: black's 2C on a3 read JK 40 %, AC 31 %, AS 11 %, no card of a
    # rank read allowed there; the game held at that move for 180 frames and lost it
    from scanner.observations import CardEvidence
    from scanner.open_questions import of_the_colour_read, of_the_rank_read

    reads = CardEvidence()
    reads.add([("JK", 0.40), ("AC", 0.31), ("AS", 0.11)])
    legal = {"10C", "2C", "2S", "4C", "6C", "6S", "QH", "9D"}
    assert of_the_rank_read(reads, legal) is None
    assert of_the_colour_read(reads, legal) == "2C"  # black, the lowest allowed
    assert of_the_colour_read(reads, {"QH", "9D"}) == "9D"  # no black allowed: red
    assert of_the_colour_read(reads, {"JK"}) is None  # the joker is no colour's guess
    assert of_the_colour_read(reads, set()) is None
    red = CardEvidence()
    red.add([("AH", 0.6), ("JK", 0.3)])
    assert of_the_colour_read(red, legal) == "9D"



def test_an_unsure_read_of_what_a_question_s_own_reads_named_is_that_card_seen_again():
    # session 29, v3-s173: an orell joker under a token, read JD 51 % when laid (the rules
    # refused red there; the game went on with the joker as an open question), read JD 60 %
    # later: taken for a new JD laid over it, a move that put the game a turn out of step.
    from scanner.detections import CardReading
    from scanner.observations import CardEvidence
    from scanner.open_questions import CardQuestion, speaks_of

    evidence = CardEvidence()
    evidence.add([("JD", 0.51), ("QD", 0.22), ("JH", 0.13)])
    answers = ["JK", "2C", "3S", "QS", "JS"]  # red refused where it was laid
    q = CardQuestion("d4.card", "d4", None, 0, None, answers, evidence, "JK")
    assert speaks_of(CardReading(card=None, confidence=0.31,
                                 candidates=[("JD", 0.6), ("JH", 0.21)]), q)
    # a card read sure is news as before, and so is an unsure read of a card never named
    assert not speaks_of(CardReading(card="JD", confidence=0.999), q)
    assert not speaks_of(CardReading(card=None, confidence=0.4,
                                     candidates=[("8H", 0.6), ("9H", 0.2)]), q)


def _move_over_a_card(steps):
    """The first move to another cell that lays its card over one already there (neither a
    joker): (step, cell, card laid, card covered)."""
    prev = steps[0][1]
    for i, (action, pos) in enumerate(steps):
        words = action.split()
        if words[1] == "move" and len(set(words[2].split("-"))) == 2 and words[3] != "JK":
            to = words[2].split("-")[1]
            under = prev["board"].get(to, {}).get("cards", [])
            if under and under[-1] != "JK":
                return i, to, words[3], under[-1]
        prev = pos
    raise AssertionError("no move over a card")


@pytest.mark.parametrize("seed", [1, 4, 7])
def test_a_last_unit_taken_off_as_it_moved_on_does_not_end_the_game(seed):
    """As above, but the unit is its side's last: taken off, it ended the game, and a game
    over explained nothing more, so the removal was never undone (v9-s379: white's last unit,
    a paper pawn, seen gone from e3 before the 3C it moved onto, ended the game 12 events
    early). The removal is undone as the move, and the game goes on to its real end."""
    steps = record_game(seed)
    frames, move = _gone_before_its_card_is_seen(steps, last_unit=True)
    assert move is not None
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in frames:
        tracker.update(frame)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_a_unit_that_moved_onto_a_card_read_as_the_old_one_laid_a_new_card(seed):
    # session 29, v3-s137: a berlin joker laid over an 8C read JK 42 %, KC 41 %, KS 11 %: the
    # black mass made it the 8C misread, and the knight that moved onto it was a unit moved
    # without a movement card until the players said. A unit moves only onto the card it
    # lays: that card is new, and its reads are weighed as such.
    steps = record_game(seed)
    i, to, laid, covered = _move_over_a_card(steps)
    suit = covered[-1]
    twin = {"C": "S", "S": "C", "D": "H", "H": "D"}[suit]
    rank = "K" if covered[:-1] != "K" else "Q"
    reads = [(rank + suit, 0.52), (rank + twin, 0.25), (laid, 0.16)]  # the covered colour
    tracker = _track(steps, seed, edit=lambda f: _blur_card(f, to, laid, reads))
    texts = [e.text for e in tracker.events]
    assert texts == truth_events(steps), tracker.holding


def _move_before_the_others_initiative(steps):
    """A move (to a card no joker) after which its side moves no more until the next round,
    whose first initiative card is the other side's: (step, cell, card laid, side)."""
    for i, (action, _pos) in enumerate(steps):
        words = action.split()
        if words[1] != "move" or words[3] == "JK":
            continue
        side = words[0]
        for later, _ in steps[i + 1:]:
            w = later.split()
            if w[1] == "initiative":
                if w[0] != side:
                    return i, words[2].split("-")[1], words[3], side
                break
            if w[0] == side and w[1] == "move":
                break
    raise AssertionError("no such move")


# (seeds 1 and 2: the move waits for the sure read and no question is asked)
@pytest.mark.parametrize("seed", [3, 4, 5])
def test_a_card_read_surely_before_its_sides_next_initiative_answers_the_question(seed):
    # session 30, v3-s173: an orell 8H laid under a black token read JK 44 %, JH 35 %, KH 14 %
    # until the next round's initiative cards came, then 8H at 99 %: taken for a second card
    # black laid there, and the game fell a turn behind. No move of black's could lay it
    # before black's initiative card of the new round: it is the question's card seen better.
    steps = record_game(seed)
    i, to, laid, side = _move_before_the_others_initiative(steps)
    other = "black" if side == "white" else "white"
    pile = steps[i][1]["initiative"][other]  # the other side's card while the move is read
    reads = [("JK", 0.44), ("JH" if laid != "JH" else "JD", 0.35),
             ("KH" if laid != "KH" else "KD", 0.14)]

    def edit(frame):
        init = frame.initiative.get(other)
        if init is not None and init.card == pile:
            _blur_card(frame, to, laid, reads)

    tracker = _track(steps, seed, edit=edit)
    texts = [e.text for e in tracker.events]
    assert texts == truth_events(steps), tracker.holding
    event = next(e for e in tracker.events if e.text == steps[i][0])
    assert event.question is None and any("seen better" in f for f in event.flags)


def _move_in_place_first_in_its_round(steps, last_unit: bool = False):
    """A move that lays its card on the unit's own cell (no joker laid or covered), made
    right after an initiative card or a draw (its side's turn just begun, as a rule);
    `last_unit`: by its side's last unit. (step, cell, card laid)"""
    prev = steps[0][1]
    for i, (action, pos) in enumerate(steps):
        words = action.split()
        if words[1] == "move" and i > 0 and steps[i - 1][0].split()[1] in ("initiative",
                                                                             "draw"):
            a, b = words[2].split("-")
            under = prev["board"].get(a, {}).get("cards", [])
            alone = sum(1 for v in prev["board"].values()
                        if (v.get("unit") or {}).get("side") == words[0]) == 1
            if a == b and words[3] != "JK" and under and under[-1] != "JK" \
                    and (alone or not last_unit):
                return i, a, words[3]
        prev = pos
    raise AssertionError("no such move")


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_a_unit_read_gone_as_its_cell_takes_a_new_card_covered_its_own_card(seed):
    # session 30, val-s35 with the stage-9 piece model: a white paper queen on the QD it
    # laid on its own cell read empty at 62 %, the QD unsure at 94 %; the queen was taken off
    # as hit before its side had moved. A card is laid only under the unit that moves onto
    # it: the unit covered its own card.
    from scanner.detections import PieceReading

    steps = record_game(seed)
    i, cell, laid = _move_in_place_first_in_its_round(steps)
    seen = []

    def edit(frame):
        c = frame.cells.get(cell)
        if frame.occluded or c is None or c.card is None or c.card.card != laid:
            return
        seen.append(frame.frame_index)
        if len(seen) <= 8:  # its first looks: the unit missed, the card unsure
            _blur_card(frame, cell, laid, [(laid, 0.94), ("JK", 0.05)], confidence=0.75)
            c.piece = PieceReading("empty", 0.62, occupied=False)

    tracker = _track(steps, seed, edit=edit)
    assert len(seen) > 8  # (the edit did bite)
    texts = [e.text for e in tracker.events]
    assert texts == truth_events(steps), tracker.holding


def _removal_before_the_attackers_next_move(steps):
    """A removal after which the attacker's side moves next, with a unit that could have
    taken it off too: (removed unit as read, its cell, that move's cell and card)."""
    from engines.royal_battles import parse_cell
    from scanner.tracker_removal import _reaches

    events = truth_events(steps)
    after = {a: pos for a, pos in steps}
    for i, e in enumerate(events):
        w = e.split()
        if w[2:3] != ["removed"]:
            continue
        prev = next((x for x in reversed(events[:i]) if x.split()[1] == "move"), None)
        nxt = next((x for x in events[i + 1:] if x.split()[1] == "move"), None)
        if not (prev and nxt and prev.split()[0] == nxt.split()[0] != w[0]):
            continue
        dest = nxt.split()[2].split("-")[1]
        kind = after[nxt]["board"][dest]["unit"]["kind"]
        if _reaches(kind, parse_cell(dest), parse_cell(w[3])):
            return f"{w[0]}-{w[1]}", w[3], dest, nxt.split()[3]
    raise AssertionError("no such removal")


@pytest.mark.parametrize("seed", [1, 2, 4, 11, 15])
def test_a_removal_read_unsure_until_the_attackers_next_move_goes_after_the_attack(seed):
    # session 30, val-s19: a black bishop hit from a1 read unsure on its cell until white's
    # next move, a round later, and its removal was logged after that move. It was last
    # read there before the attack that could take it off: that attack took it.
    from scanner.detections import PieceReading

    steps = record_game(seed)
    unit, cell, dest, card = _removal_before_the_attackers_next_move(steps)
    frames = frames_of(steps, _empty(steps), seed=seed)
    laid = next(i for i, f in enumerate(frames)
                if f.cells[dest].card is not None and f.cells[dest].card.card == card)
    last = max(i for i, f in enumerate(frames[:laid])
               if f.cells[cell].piece is not None and f.cells[cell].piece.piece == unit)
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    blurred = 0
    for i, frame in enumerate(frames):
        if last < i < laid and not frame.occluded:
            frame.cells[cell].piece = PieceReading(None, 0.55)  # neither the unit nor empty
            blurred += 1
        tracker.update(frame)
    assert blurred > 10
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_side_whose_units_are_all_down_is_placed_before_the_other_side_finishes(seed):
    """The last unit of the side that finishes placing first is logged once it stands on its
    card, not when the other side's last unit follows (xv-s97, xv-s127: the record lagged
    the table for six settled frames at every set-up)."""
    steps, tracker = _run(seed)
    assert [e.text for e in tracker.events] == truth_events(steps)
    places = [e for e in tracker.events if e.kind == "place"]
    *_, first_done, last = places
    assert first_done.text.split()[0] != last.text.split()[0]  # the two sides' last units
    assert first_done.frame < last.frame


@pytest.mark.parametrize("left,to_move,planned,steps", [
    ({"white": 1, "black": 1}, "white", ["white"], ["white"]),
    # white would place one of its two before black's turn: none of it, not half
    ({"white": 2, "black": 1}, "white", ["white"], []),
    ({"white": 1, "black": 1}, "black", ["white"], []),  # black's turn, black undecided
    ({"white": 2, "black": 1}, "white", ["white", "black"], ["white", "black", "white"]),
    ({"white": 0, "black": 2}, "black", ["black"], ["black", "black"]),
])
def test_units_are_placed_in_the_engine_s_turns_a_side_s_plan_whole_or_not_at_all(
        left, to_move, planned, steps):
    from types import SimpleNamespace

    from scanner.tracker_placement import _placing_steps

    state = SimpleNamespace(to_place={Side(s): ["pawn"] * n for s, n in left.items()},
                            to_move=Side(to_move))
    plans = {Side(s): {f"{f}{'1' if s == 'white' else '5'}": "pawn"
                       for f in "aceg"[:left[s]]} for s in planned}
    assert _placing_steps(state, plans) == [Side(s) for s in steps]



@pytest.mark.parametrize("seed, cell, setup_card", [(13, "e1", "10S"), (1, "a1", "9S"),
                                                   (7, "g1", "2D")])
def test_a_set_up_cards_question_is_not_answered_by_a_card_laid_on_it_later(seed, cell,
                                                                            setup_card):
    # session 34, v4-s199: white's set-up 4S on e1, under its unit and never read surely (a
    # question to the end), then white laid 2D there in place, read while the tracker was
    # behind the table. The 2D was taken for the set-up card seen better (a rule for a move's
    # card read again before its side's next initiative card) and the move was lost. Only a
    # move's question is answered that way: after a set-up card its side moved many times.
    steps = record_game(seed)
    side = next(a.split()[0] for a, _ in steps if a.split()[1:3] == ["setup", cell])
    twin = twin_of(setup_card)
    reads = [(setup_card, 0.55), (twin, 0.4)]
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    move = next(i for i, (a, _) in enumerate(steps) if a.split()[1] == "move"
                and cell in a.split()[2].split("-"))
    frames = frames_of(steps[:move], _empty(steps), seed=seed)
    for frame in frames:
        _blur_card(frame, cell, setup_card, reads)
        tracker.update(frame)
    key = f"{cell}.card"
    question = [q for q in tracker.questions if getattr(q, "key", None) == key]
    assert question and question[0].event.kind == "setup"  # still asked, as on v4-s199
    # the card laid on it read surely before the side's current initiative card lay
    tracker._card_since[key] = frames[-1].frame_index - 30
    tracker._card_since[f"init.{side}"] = frames[-1].frame_index - 10
    seen = {f"{cell}.unit": f"{side}-x", key: "QD"}
    assert not tracker._seen_before_its_turn({key: (setup_card, "QD")}, seen)
    assert question[0] in tracker.questions


def _track_with_the_card_read(steps, seed, cell, laid, read):
    """A tracker fed a game's frames where the card `laid` on `cell` is read, at its n-th
    look in view, as `read(n, the cell's reading)` says; where that is None, the look is left
    as it was and not counted (and the piles' reads name their candidates, as a camera's
    do)."""
    looks = []

    def edit(frame):
        for pile in frame.initiative.values():
            if pile is not None and pile.card and not pile.candidates:
                pile.candidates = [(pile.card, 0.99)]
        c = frame.cells.get(cell)
        if c is not None and c.card is not None and c.card.card == laid and not frame.occluded:
            card = read(len(looks), c)
            if card is not None:
                c.card = card
                looks.append(frame.frame_index)

    return _track(steps, seed, edit=edit)


@pytest.mark.parametrize("seed, cell, laid, read_as", [
    (2, "a1", "7D", "QD"), (3, "g4", "KC", "6C"), (5, "f4", "7D", "4H"), (9, "e2", "4S", "JS")])
def test_a_card_read_sure_twice_in_one_deck_weighs_both_places(seed, cell, laid, read_as):
    # session 34, v4-s199: black's QH on g4, read JH 97 % (QH 3 %) as long as it lay in view,
    # refused black's JH read 100 % on its initiative pile, and the game held there until the
    # table was re-read (60 of 94 moves, 20 spurious events). The two places' reads are
    # weighed as a pair that can't hold the same card, as for a card read unsure: the earlier
    # place takes the other card its reads named.
    from scanner.detections import CardReading

    steps = record_game(seed)
    tracker = _track_with_the_card_read(steps, seed, cell, laid, lambda n, _cell: CardReading(
        card=read_as, confidence=0.97, candidates=[(read_as, 0.97), (laid, 0.03)]))
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding
    # (the earlier move is flagged where the pair's weighing took it ACCEPT sure; else it was
    # asked, and its bare looks settled it)
    assert any(f"{read_as} turned up again" in f for e in tracker.events for f in e.flags)


def _with_the_unit_lifted(steps, seed, cell, laid, lifted=3):
    """The frames of a game where, before the move that lays `laid` on `cell` in place, the
    unit there is lifted in plain view for `lifted` settled frames (a hand the occlusion gate
    does not see, holding the piece while the card goes under it)."""
    import copy

    from scanner.detections import PieceReading

    frames = frames_of(steps, _empty(steps), seed=seed)
    k = next(n for n, f in enumerate(frames) if not f.occluded and f.cells[cell].card
             is not None and f.cells[cell].card.card == laid)
    while frames[k - 1].occluded:
        k -= 1
    extra = []
    for _ in range(lifted):
        frame = copy.deepcopy(frames[k - 1])
        frame.cells[cell].piece = PieceReading("empty", 0.99)
        extra.append(frame)
    out = frames[:k] + extra + frames[k:]
    for n, frame in enumerate(out):
        frame.frame_index = n
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 5, 7, 10])
def test_a_unit_lifted_while_its_card_goes_under_it_is_not_taken_off(seed):
    # session 34, v5-s223: a white knight lifted for three unclouded frames while white laid
    # 2H under it on e1 was taken off as hit (no attack entered), then stood on the new card
    # with no unit to have moved there; the game parted ways with the table (78/98 moves,
    # 11 spurious events). Seen back on its cell before the game logged anything else, the
    # unit was lifted: the removal is undone and the move in place taken.
    steps = record_game(seed)
    i, cell, laid = _move_in_place_first_in_its_round(steps)
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in _with_the_unit_lifted(steps, seed, cell, laid):
        tracker.update(frame)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


@pytest.mark.parametrize("seed", [1, 4, 5, 6])
def test_a_last_unit_lifted_while_its_card_goes_under_it_does_not_end_the_game(seed):
    """As above, the unit its side's last: taken off, it ended the game, and a game over
    explained nothing more; seen back on its cell, the removal is undone all the same."""
    steps = record_game(seed)
    i, cell, laid = _move_in_place_first_in_its_round(steps, last_unit=True)
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in _with_the_unit_lifted(steps, seed, cell, laid):
        tracker.update(frame)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


@pytest.mark.parametrize("seed, side, first, second", [
    (1, "black", "7D", "KS"), (2, "white", "QD", "6S"), (4, "black", "4D", "7S"),
    (7, "black", "10D", "8S")])
def test_a_new_initiative_card_taken_for_more_looks_at_the_last_is_logged(seed, side, first,
                                                                           second):
    # session 34, v5-s229: black's 9C on its pile read 9C 81 %, 9S 19 % and went on as 9C;
    # black's real 9S a round later, too like it for the frame loop to see it laid, was taken
    # for more looks at the 9C and turned that question to 9S, and the game waited for a
    # black initiative card that already lay (83 of 96 moves, 7 spurious events). A deck holds
    # each card once: the sure reads are of the new card, and the question's card is the one
    # it first went on with.
    steps = record_game(seed)

    def edit(frame):
        _blur_initiative(frame, side, first, [(first, 0.8), (second, 0.2)])
        pile = frame.initiative.get(side)
        if pile is not None and pile.card == second and not pile.candidates:
            pile.candidates = [(second, 0.997), (first, 0.003)]

    tracker = _track(steps, seed, edit=edit)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding



def _jokers_laid_second_over_a_number_card(steps):
    """Joker moves to another cell, made by the side moving second in its round, over a
    number card: (step, from, to, the card covered) each."""
    out, movers, prev = [], [], steps[0][1]
    for i, (action, pos) in enumerate(steps):
        words = action.split()
        if words[1] == "initiative":
            movers = []
        elif words[1] == "move":
            frm, to = words[2].split("-")
            under = prev["board"].get(to, {}).get("cards", [])
            if movers and movers[-1] != words[0] and frm != to and words[3] == "JK" \
                    and under and under[-1][:-1] not in ("J", "Q", "K", "JK", "A"):
                out.append((i, frm, to, under[-1]))
            movers.append(words[0])
        prev = pos
    return out


def _a_joker_read_as_courts(steps, seed, i, to, covered, lifted=4):
    """The frames of a game where the joker of step `i` lies on `to` `lifted` settled frames
    before its unit, held in a hand the occlusion gate does not see, stands on it; the joker
    is read unsure throughout as courts of the covered card's colour, leaning to jacks but to
    no one card (v6-s277: an orell joker over a 5S, read JS 46 %, JC 24 %, KS 10 %)."""
    import copy

    from scanner.detections import PieceReading

    suit = covered[-1]
    twin = {"C": "S", "S": "C", "D": "H", "H": "D"}[suit]
    courts = [("J" + suit, 0.46), ("J" + twin, 0.24), ("K" + suit, 0.10)]
    frames = frames_of(steps, _empty(steps), seed=seed)
    k = next(n for n, f in enumerate(frames) if not f.occluded and f.cells[to].card
             is not None and f.cells[to].card.card == "JK")
    extra = []
    for _ in range(lifted):
        frame = copy.deepcopy(frames[k])
        frame.cells[to].piece = PieceReading("empty", 0.99)
        extra.append(frame)
    out = frames[:k] + extra + frames[k:]
    for n, frame in enumerate(out):
        frame.frame_index = n
        _blur_card(frame, to, "JK", courts, confidence=0.76)
    return out


@pytest.mark.parametrize("seed", [21, 26, 28])
def test_a_joker_read_as_courts_over_a_number_card_is_where_the_lifted_unit_goes(seed):
    # session 35, v6-s277: white's king, attacked on a2, was lifted onto an orell joker laid
    # over the 5S on b2; the joker, read JS 46 %, JC 24 %, KS 10 %, was taken for the 5S
    # misread and, with no card seen laid next door, the king lifted was taken off as hit.
    # The game then put the king's move on another unit and parted ways with the table (79 of
    # 99 moves, 4 spurious events). Courts read over a number card may be a joker laid on it,
    # and a read leaning to one rank is a card laid: the unit is on its way there.
    steps = record_game(seed)
    i, _frm, to, covered = _jokers_laid_second_over_a_number_card(steps)[0]
    steps = steps[:i + 6]
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in _a_joker_read_as_courts(steps, seed, i, to, covered):
        tracker.update(frame)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


@pytest.mark.parametrize("measured", [True, False])
def test_a_king_seen_taller_than_its_queen_at_set_up_decides_which_is_which(measured):
    """White's king and queen read 60/40 as each other at set-up (s64's held-out lathe
    pair): the heights measured over their set-up cards (king 7.5 cm, queen 6.8) turn the
    placement the right way; without them it goes the wrong way."""
    from scanner.detections import PieceReading

    steps = record_game(5)  # white: queen, knight, king, knight
    n_setup = next(i for i, (a, _) in enumerate(steps) if a.split()[1] == "initiative")
    places = {a.split()[2]: a.split()[3] for a, _ in steps[:n_setup]
              if a.startswith("white place")}
    king, queen = places["king"], places["queen"]
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in frames_of(steps[:n_setup], _empty(steps), seed=5):
        for cell, (read, other, h) in {king: ("queen", "king", 7.5),
                                       queen: ("king", "queen", 6.8)}.items():
            p = frame.cells[cell].piece
            if p is not None and p.piece and p.piece.startswith("white"):
                frame.cells[cell].piece = PieceReading(
                    None, 0.9, occupied=True, seen_side="white",
                    kinds=[(read, 0.6), (other, 0.4)], height_cm=h if measured else None)
        tracker.update(frame)
    placed = {e.text.split()[3]: e.text.split()[2] for e in tracker.events
              if e.text.startswith("white place")}
    if measured:
        assert placed[king] == "king" and placed[queen] == "queen"
    else:
        assert placed[king] == "queen" and placed[queen] == "king"


def test_an_open_placement_weighs_the_units_heights_with_their_views():
    """The set-up heights stay with the placement question: later views leaning 60/40 the
    wrong way do not outweigh a king seen 10 % taller than its queen."""
    from scanner.open_questions import PlacementQuestion

    def question(heights):
        q = PlacementQuestion(Side.WHITE, ["c1", "e1"], [("king", "queen"), ("queen", "king")],
                              [], [], None, chosen=("king", "queen"), heights=heights)
        q.add_view("c1", "c1", {"queen": 0.6, "king": 0.4})
        q.add_view("e1", "e1", {"king": 0.6, "queen": 0.4})
        return q.ranked()[0][0]

    assert question({}) == ("queen", "king")
    assert question({"c1": 7.5, "e1": 6.8}) == ("king", "queen")


def test_the_set_is_learnt_once_the_game_has_settled_a_placement_in_question():
    """White's units read as any kind at set-up: the set-up view cannot teach the piece
    classifier the set (`piece_adapt.enough_to_learn`). The units' later views settle the
    placement, and a later settled frame, every unit seen standing on its cell, may; a frame
    with a unit lifted off its cell may not (`scan_cli._units_settled_in_view`)."""
    from scanner.scan_cli import _units_settled_in_view

    steps = record_game(3)
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    army = steps[0][1]["armies"]["white"]
    ready = []
    for frame in frames_of(steps, _empty(steps), seed=3):
        if tracker.state.phase.value in ("setup", "place"):
            for cell in frame.cells.values():
                p = cell.piece
                if p is not None and p.piece and p.piece.startswith("white"):
                    cell.piece = PieceReading(None, 0.9, occupied=True, seen_side="white",
                                              kinds=[(k, 1 / len(army)) for k in army])
        tracker.update(frame)
        if tracker.state.phase.value not in ("setup", "place"):
            ready.append(_units_settled_in_view(frame, tracker))
            if ready[-1]:
                lifted = next(c for c in frame.cells.values()
                              if c.piece is not None and c.piece.occupied)
                lifted.piece = PieceReading("empty", 0.99)
                assert not _units_settled_in_view(frame, tracker)
    assert ready[0] is False
    assert any(ready), "the placement was never settled"
    assert [e.text for e in tracker.events] == truth_events(steps)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_set_up_card_read_as_a_unit_before_placing_does_not_put_its_unit_first(seed):
    """White's last set-up card reads as a white unit from the moment it is laid (a court's
    picture read as a piece); the unit later placed there is read right. The placements are
    logged in the order the units came, not with that card's unit first (v9-s383: white's
    JH on g1, read as a knight from frame 47, put the queen placed there at 127 before the
    bishop placed on c1 at 103)."""
    steps = record_game(seed)
    acts = [a for a, _pos in steps]
    places = [a.split()[3] for a in acts if a.split()[:2] == ["white", "place"]]
    phantom = places[-1]  # the cell of white's last placement: its card lies there longest
    army = set(steps[0][1]["armies"]["white"])
    ghost = next(k for k in ("knight", "rook", "bishop", "pawn", "queen", "king")
                 if k not in army) if len(army) < 6 else "knight"
    laid = False

    def edit(frame):
        nonlocal laid
        cell = frame.cells.get(phantom)
        if cell is None or cell.card is None:
            return
        laid = True
        if cell.piece is not None and not cell.piece.occupied:
            cell.piece = PieceReading(f"white-{ghost}", 0.9)

    tracker = _track(steps, seed, edit)
    assert laid
    got = [e.text for e in tracker.events if " place " in e.text and e.text.startswith("white")]
    assert got == [a for a in acts if a.split()[:2] == ["white", "place"]], tracker.holding


@pytest.mark.parametrize("seed, move, removal", [
    (14, "white move f2-f3 JC", "white king removed f3"),
    (22, "black move d3-e3 JC", "black pawn removed e3"),
    (36, "white move e2-e3 JD", "white knight removed e3"),
    (69, "black move g4-g3 JC", "black pawn removed g3")])
def test_a_unit_taken_off_a_jack_read_as_the_joker_under_it_is_removed_in_its_turn(
        seed, move, removal):
    """The jack a unit moved onto is read sure as the joker while the unit stands on it,
    and as itself once the unit is taken off. A jack can be laid over a joker, but no unit
    came to lay it: the bare read is the card seen better, and the removal is logged in its
    turn (v5-s239: white's JS on g4, read JK under its king and JS once the king was taken
    off, held the removal 116 frames, until after five later events)."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    cell, laid = move.split()[2].split("-")[1], move.split()[3]

    def edit(frame):
        c = frame.cells.get(cell)
        if c is not None and c.card is not None and c.card.card == laid \
                and c.piece is not None and c.piece.occupied:
            c.card = CardReading(card="JK", confidence=0.99, candidates=[("JK", 0.99),
                                                                        (laid, 0.01)])

    tracker = _track(steps, seed, edit)
    want = truth_events(steps)
    want = [t for t in want[:want.index(removal) + 1] if t != move]
    got = [e.text for e in tracker.events]
    at = next(i for i, t in enumerate(got) if t.split()[:3] == move.split()[:3])
    # the move's card as read under the unit; every other event up to the removal in its
    # place (a joker taken for the jack may change what the rules allow later)
    assert got[at] in (move, with_card(move, "JK"))
    assert (got[:at] + got[at + 1:])[:len(want)] == want, tracker.holding


@pytest.mark.parametrize("seed", [1, 2, 4, 5])
def test_a_unit_put_down_before_the_set_up_is_done_is_placed_in_its_turn(seed):
    """White's last unit stands on its set-up card, read sure, from the moment that card is
    laid, before black's set-up cards are down (a player who puts a unit down early). It
    is no unit placed until its turn shows it (its read changing) or the initiative cards
    show every unit placed: the placements are logged in the engine's turns and the game
    after them in order (before, its unit went first among white's placements)."""
    steps = record_game(seed)
    last = [a for a, _pos in steps if a.split()[:2] == ["white", "place"]][-1]
    cell, kind = last.split()[3], last.split()[2]

    def edit(frame):
        c = frame.cells.get(cell)
        if c is not None and c.card is not None and c.piece is not None \
                and not c.piece.occupied:
            c.piece = PieceReading(f"white-{kind}", 0.99, kinds=[(kind, 0.99)])

    tracker = _track(steps, seed, edit)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


def test_units_that_moved_on_still_teach_the_set_while_others_are_in_question():
    """White's knight and pawn read as each other throughout: the placement stays a question
    and those two are left out of what the piece classifier may learn from; white's king,
    moved on from its set-up card, is known by that card and is still learnt from (the set
    is learnt later in a game whose set-up view could not teach it)."""
    steps = record_game(4)
    tracker, (k1, c1), (k2, c2) = _set_up_leaning_the_wrong_way(steps, 30, after_set_up=True,
                                                                lean=0.5)
    assert tracker.open_questions()
    moved = {cell: origin for cell, origin in tracker._origin.items() if cell != origin}
    assert moved.get("b2") == "a1"
    white = {c: u for c, u in tracker.placed_units().items() if u.startswith("white")}
    assert white == {"b2": "white-king", "g1": "white-rook"}
    assert c1 not in white and c2 not in white


@pytest.mark.parametrize("seed,nth", [(4, 0), (5, 0), (7, 3)])
def test_a_unit_the_piece_reader_never_sees_on_its_card_is_not_taken_off_as_hit(seed, nth):
    """Every unit standing on the card of the game's `nth` move is read firmly empty (v3-s163:
    a brutalchess knight on a berlin KC, empty at 0.958): the move is taken from its card, and
    the same empty read is no news that the unit was taken off (it was, three frames later, and
    the removal the attack did make could then not be explained)."""
    steps = record_game(seed)
    moves = [a for a, _ in steps if a.split()[1] == "move"
             and len(set(a.split()[2].split("-"))) == 2]
    to = moves[nth].split()[2].split("-")[1]

    def unseen(frame):
        cell = frame.cells.get(to)
        if cell is not None and cell.piece is not None and cell.piece.occupied:
            cell.piece = PieceReading("empty", 0.958)

    tracker = _track(steps, seed, edit=unseen)
    assert [e.text for e in tracker.events] == truth_events(steps)
    assert any("not read: taken as the" in f for e in tracker.events for f in e.flags)


@pytest.mark.parametrize("seed, cell, laid, read_as", [
    (1, "b3", "6S", "5C"), (2, "b5", "2D", "10D"), (2, "f1", "4S", "KC")])
def test_a_card_settled_on_later_looks_still_gives_way_to_a_sure_read_of_it_elsewhere(
        seed, cell, laid, read_as):
    """A card first read unsure, going on as an open question with the card it leaned to,
    then settled so on later looks (xv-s83: an orell QH under white's unit, settled as JH
    99 %): when its deck's real card turns up read sure, the two places' reads are weighed
    as a pair, as for a card taken sure (before, the settled event was out of reach, and
    white's real JH, read 99.7 %, held the game to its end: 83 of 100 moves)."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    tracker = _track_with_the_card_read(steps, seed, cell, laid, lambda n, _cell: CardReading(
        card=None, confidence=0.6, candidates=[(read_as, 0.6), (laid, 0.4)]) if n < 6
        else CardReading(card=read_as, confidence=0.995,
                         candidates=[(read_as, 0.995), (laid, 0.005)]))
    move = next(e for e in tracker.events if e.kind == "move" and e.text.endswith(
        f"-{cell} {laid}"))
    assert any(f.startswith("settled on later looks") for f in move.flags), move.flags
    # (taken back ACCEPT sure by the pair's weighing, or asked by it and settled on the card's
    # bare looks)
    assert any(f"{read_as} turned up again" in f for e in tracker.events for f in e.flags)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


@pytest.mark.parametrize("seed, cell, laid, read_as", [
    (1, "f1", "AS", "8S"), (2, "c3", "QH", "5H"), (3, "b1", "4H", "JD")])
def test_a_card_taken_as_its_bare_read_still_gives_way_to_a_sure_read_of_it_elsewhere(
        seed, cell, laid, read_as):
    """A movement card read fairly surely under its unit, then read as another card once
    bare, is taken as that other card (a bare card is seen better); when that card then
    turns up on the table read sure, the two places' reads are weighed as a pair, as for a
    card taken sure (val-s7: white's JS on c2, read JS 98 % under its unit and QS once bare,
    was taken as QS; white's real QS on its initiative pile then stayed an open question).
    Before, every later event of that deck's card was held or asked."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    bare_reads = []

    def read(n, c):
        if c.piece is not None and c.piece.occupied:
            return CardReading(card=None, confidence=0.97,
                               candidates=[(laid, 0.97), (read_as, 0.03)])
        bare_reads.append(n)  # the bare card misread, surely, for as long as it lies bare
        return CardReading(card=read_as, confidence=0.999,
                           candidates=[(read_as, 0.999), (laid, 0.001)])

    tracker = _track_with_the_card_read(steps, seed, cell, laid, read)
    move = next(e for e in tracker.events if e.kind == "move" and e.text.endswith(
        f"-{cell} {laid}"))
    assert bare_reads
    assert any("once bare: taken as that" in f for f in move.flags), move.flags
    assert any(f"read as {read_as}, but {read_as} turned up again" in f for f in move.flags)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


@pytest.mark.parametrize("seed, cell, read_as", [(5, "b3", "KS"), (6, "g4", "QH"),
                                                 (24, "e4", "JD")])
def test_a_joker_read_as_a_court_its_deck_showed_before_is_no_card_laid_in_place(
        seed, cell, read_as):
    """A joker laid under its unit, read unsure as a court its deck already showed (so the
    game goes on with the joker, an open question), then read as that court surely while the
    unit still stands on it, before its side's next initiative card: no card could have been
    laid there since, so the read is the joker misread, not a card laid in place (v7-s313: a
    berlin joker under white's king, read JC 99.7 %; this deck's JC had lain bare, and a JS
    laid in place was invented: 85/93 moves with 7 spurious)."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    other = ("K" if read_as[0] != "K" else "Q") + read_as[-1]
    looks = []

    def read(n, c):
        if c.piece is None or not c.piece.occupied:
            return None  # only looks with the unit on it
        looks.append(n)
        return CardReading(card=None, confidence=0.79, candidates=[
            (read_as, 0.79), ("JK", 0.09), (other, 0.09)]) if n < 3 \
            else CardReading(card=read_as, confidence=0.997,
                             candidates=[(read_as, 0.997), ("JK", 0.003)])

    tracker = _track_with_the_card_read(steps, seed, cell, "JK", read)
    assert len(looks) > 3
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


@pytest.mark.parametrize("seed, cell, laid", [(2, "d4", "8S"), (6, "d1", "7S"), (4, "f4", "4S"),
                                              (7, "e5", "QC")])
def test_a_card_under_its_unit_read_as_its_twin_is_no_card_laid_in_place(seed, cell, laid):
    """A movement card read sure under the unit that moved onto it, later read sure as its
    twin (same rank and colour, other suit) while that unit still stands there: the card
    seen worse, not a card laid in place (v10-s410: an orell AC under white's rook, read AS
    99.85 % as black's knight came next to it; the AC was rewritten to a joker for the AS to
    cover, and the rook's removal and the king's move onto the AC were lost)."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    twin = twin_of(laid)
    under_unit = []

    def read(n, c):
        if c.piece is None or not c.piece.occupied:
            return None  # bare, it reads as it is
        under_unit.append(n)
        return CardReading(card=laid, confidence=0.9994, candidates=[
            (laid, 0.9994), (twin, 0.0006)]) if len(under_unit) < 30 \
            else CardReading(card=twin, confidence=0.9985, candidates=[
                (twin, 0.9655), (laid, 0.0345)])

    tracker = _track_with_the_card_read(steps, seed, cell, laid, read)
    assert len(under_unit) > 60  # the twin was read for longer than it was read right
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding
    assert not any("joker" in f for e in tracker.events for f in e.flags)


def _initiative_read_low(steps):
    """A round where white's initiative card W beats black's and white moves first, and a
    card X of W's suit, lower than black's and unused in the game, for W to be misread as:
    (W, X), or None."""
    from engines.royal_battles.cards import parse_card

    used = {a.split()[-1] for a, _pos in steps}
    inits = [(i, a) for i, (a, _pos) in enumerate(steps) if a.split()[1] == "initiative"]
    for (_i, a), (j, b) in zip(inits, inits[1:], strict=False):
        if not (a.startswith("white") and b.startswith("black")):
            continue
        white, black = a.split()[-1], b.split()[-1]
        if "JK" in (white, black) or \
                parse_card(white).initiative_key() <= parse_card(black).initiative_key():
            continue
        if not next((x for x, _pos in steps[j + 1:] if x.split()[1] == "move"),
                    "").startswith("white"):
            continue
        low = next((r + white[-1] for r in "23456789" if r + white[-1] not in used and
                    parse_card(r + white[-1]).initiative_key()
                    < parse_card(black).initiative_key()), None)
        if low is not None:
            return white, low
    return None


@pytest.mark.parametrize("seed", [11, 12])
def test_an_initiative_card_read_sure_still_gives_way_to_the_order_of_play(seed):
    """White's initiative card read sure as a lower card of its suit, its reads naming the
    real one too (s31: white's JD read 3D 79 %, JD 14 %), that would have black move first;
    white moves first. The order of play turns white's card to the one its reads named, an
    open question, where before it turned black's card, read right, to one no read named."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    white, low = _initiative_read_low(steps)

    def edit(frame):
        pile = frame.initiative.get("white")
        if pile is not None and pile.card == white:
            frame.initiative["white"] = CardReading(
                corners=pile.corners, card=low, confidence=0.998,
                candidates=[(low, 0.79), (white, 0.14), ("JK", 0.04)])

    tracker = _track(steps, seed, edit=edit)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding
    event = next(e for e in tracker.events if e.text == f"white initiative {white}")
    assert event.question is not None  # asked: the camera read it otherwise


def _bare_cards_read_unsure(frame, occupancy: float) -> None:
    """Every bare card of a frame read unsure by the piece classifier, its occupancy at
    `occupancy` (its own `unsure` class taking the rest)."""
    for cell in frame.cells.values():
        if cell.piece is not None and cell.piece.piece == "empty":
            cell.piece = PieceReading(None, occupancy)


@pytest.mark.parametrize("seed", [2, 3, 4])
def test_a_card_the_piece_classifier_reads_surely_unsure_is_bare(seed):
    """s51: a tango QH under a lathe rook read, once the rook was taken off, as the piece
    classifier's `unsure` class at 99.9 % for the rest of the game, and the rook stood on in
    the tracked game. In the 78 recorded games no cell with a unit read so."""
    steps = record_game(seed)
    want = truth_events(steps)
    assert any(" removed " in t for t in want)
    tracker = _track(steps, seed, edit=lambda f: _bare_cards_read_unsure(f, 0.003))
    assert [e.text for e in tracker.events] == want, tracker.holding
    # read unsure less surely (as units on the cards are, at 0.05 and up) they say nothing,
    # and the units taken off stay on in the game
    tracker = _track(steps, seed, edit=lambda f: _bare_cards_read_unsure(f, 0.05))
    assert [e.text for e in tracker.events] != want


def _standing_card_read_in_the_other_colour_run(seed: int):
    """A recorded game where a unit moves off a joker laying a number card X, and then off X
    laying a number card Y. X is read unsure as a card of Y's colour (its likeliest; X itself
    30 %): a move off the joker could lay it, so the game goes on with it as an open question.
    Y is read unsure too (Y 60 %, its twin 35 %): it can't follow a standing card of its own
    colour, so only X explains the move off it. (steps, tracker, the move laying X, the move
    off it, the card misread, X)."""
    from engines.errors import RulesError
    from engines.royal_battles import parse_action
    from engines.royal_battles.position import from_json

    steps = record_game(seed)
    laid: dict[str, int] = {}  # cell -> the move that laid the card on top there
    off_a_joker: set[int] = set()  # moves whose unit left a joker
    numbers = ("2", "3", "4", "5", "6", "7", "8", "9", "10")
    for i, (action, _pos) in enumerate(steps):
        words = action.split()
        if words[1] != "move":
            continue
        frm, to = words[2].split("-")
        if frm in laid and steps[laid[frm]][0].split()[-1] == "JK" and frm != to:
            off_a_joker.add(i)
        m1 = laid.get(frm)
        x, y = (steps[m1][0].split()[-1] if m1 is not None else None), words[3]
        if m1 in off_a_joker and frm != to and x[:-1] in numbers and y[:-1] in numbers:
            mine = {a.split()[-1] for a, _pos in steps if a.split()[0] == words[0]}
            for wrong in [r + s for r in numbers
                          for s in (("D", "H") if y[-1] in "DH" else ("C", "S"))
                          if r + s not in mine]:
                before = GameTracker(state=from_json(steps[m1 - 1][1])).state
                try:
                    before.apply(parse_action(with_card(steps[m1][0], wrong)))
                except RulesError:
                    continue

                def edit(frame, a=frm, b=to, x=x, y=y, wrong=wrong):
                    for cell, code, cands in ((a, x, [(wrong, 0.65), (x, 0.3)]),
                                              (b, y, [(y, 0.6), (twin_of(y), 0.35)])):
                        c = frame.cells.get(cell)
                        if c is not None and c.card is not None and c.card.card == code:
                            c.card.card, c.card.candidates = None, cands

                return steps, _track(steps, seed, edit), steps[m1][0], action, wrong, x
        laid[to] = i
    raise AssertionError("no move off a joker and on with two number cards")


@pytest.mark.parametrize("seed", [21, 28, 34, 40])
def test_a_standing_card_read_in_the_wrong_colour_gives_way_to_the_move_off_it(seed):
    # v8-s349: white's AD on d2 read AC 65 %, JK 27 %, an open question going on with AC;
    # the 3C white then laid on c2 moving off it, read 3C 61 %, 2C 36 %, could not follow a
    # black standing card: the game held, re-read the table and lost 15 moves
    steps, tracker, laying, left, wrong, x = _standing_card_read_in_the_other_colour_run(seed)
    texts = [e.text for e in tracker.events]
    assert left in texts, tracker.holding
    assert any(f"the {wrong} it left was read wrong: {x}" in f
               for f in tracker.events[texts.index(left)].flags)
    assert laying in texts  # the card it left, its question going on with X
    assert not any(e.text.startswith("table re-read") for e in tracker.events)


def _initiative_card_read_as_a_later_movement_card(seed: int):
    """A recorded game where white's initiative card X of some round could be a card Y that
    white lays later as a movement card (Y unseen till then, and as high against black's card
    of that round as X, so the order of play can't tell them apart). (steps, X's action, Y's
    move, X, Y)."""
    from engines.royal_battles.cards import parse_card

    steps = record_game(seed)
    acts = [a for a, _pos in steps]

    def laid(a: str) -> bool:
        return a.split()[1] in ("setup", "initiative", "move")

    for i, action in enumerate(acts):
        if not action.startswith("white initiative"):
            continue
        x = action.split()[-1]
        black = next((a.split()[-1] for a in acts[i + 1:i + 3]
                      if a.startswith("black initiative")), None)
        if black is None or "JK" in (x, black):
            continue
        wins = parse_card(x).initiative_key() > parse_card(black).initiative_key()
        seen = {a.split()[-1] for a in acts[:i] if a.startswith("white") and laid(a)}
        for j in range(i + 3, len(acts)):
            y = acts[j].split()[-1]
            if not acts[j].startswith("white move") or y in seen | {x, "JK"}:
                continue
            if (parse_card(y).initiative_key() > parse_card(black).initiative_key()) == wins \
                    and not any(a.startswith("white") and laid(a) and a.split()[-1] == y
                                for a in acts[i + 1:j]):
                return steps, action, acts[j], x, y
    raise AssertionError("no initiative card that a later movement card could be")


@pytest.mark.parametrize("seed", [21, 24, 26, 29])
def test_a_pile_question_naming_no_other_card_gives_way_to_a_surer_read_of_its_card(seed):
    # v6-s257: white's joker on its initiative pile read JC 68 %, nothing else named; the real
    # JC laid on a3 later, read 90 %, was refused as the pile's card, and the game took a QS
    # no read named, re-read the table twice and lost 7 moves
    steps, drawn, move, x, y = _initiative_card_read_as_a_later_movement_card(seed)
    cell = move.split()[2].split("-")[1]

    def edit(frame):
        _blur_initiative(frame, "white", x, [(y, 0.68)])
        _blur_card(frame, cell, y, [(y, 0.9), (twin_of(y), 0.05)])

    tracker = _track(steps, seed, edit)
    texts = [e.text for e in tracker.events]
    assert move in texts, tracker.holding
    want = truth_events(steps)
    k = want.index(drawn)
    pile = tracker.events[k]
    assert pile.text.startswith("white initiative ") and pile.text != f"white initiative {y}"
    assert pile.question is not None  # still asked: the players say which card it was
    assert texts[:k] + texts[k + 1:] == want[:k] + want[k + 1:], tracker.holding
    assert not any(t.startswith("table re-read") for t in texts)


def test_the_read_a_card_was_taken_against_is_no_news_while_it_stands():
    """A card the rules took against the lean of the read standing there (v6-s257: a JC on a3
    read JH 57 %, JC 32 % under its pawn, taken as JC) stays believed while the incremental
    scanner repeats that very read, or a routine re-read of the unchanged pixels names the
    same candidates again (v7-s307: black's JC pile, read KH 95 %, re-read so 50 frames later
    and taken for black's next initiative card), though it leans to the other colour; another
    read leaning so, where the place's pixels were not seen to change, is news (v10-s399's card
    laid in place, `_in_place_moves_read_unsure`)."""
    from scanner.detections import CardReading, TableReading
    from scanner.observations import UNREAD

    steps = record_game(1)
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in frames_of(steps, _empty(steps), seed=1):
        tracker.update(frame)
        if any(e.text.split()[1] == "move" for e in tracker.events):
            break
    move = next(e.text for e in tracker.events if e.text.split()[1] == "move")
    key, code = f"{move.split()[2][-2:]}.card", move.split()[3]
    other = code[:-1] + ("H" if code[-1] in "CS" else "C")  # same rank, the other colour
    look = CardReading(card=None, confidence=0.57,
                       candidates=[(other, 0.57), (code, 0.32), (twin_of(code), 0.08)])
    tracker._last_read[key] = look
    tracker._believe(key, code)  # what the rules do when they take `code` against `look`

    def seen(read) -> object:
        values, believed = {key: UNREAD}, {key: code}
        tracker._misreads_of_agreed(TableReading(changed=set()), values, believed, {key: read})
        return values[key]

    assert seen(look) == code
    assert seen(CardReading(card=None, confidence=0.55, candidates=[
        (other, 0.55), (code, 0.35), (twin_of(code), 0.07)])) == code  # the same look again
    assert seen(CardReading(card=None, confidence=0.88, candidates=[
        (other, 0.88), (code, 0.05)])) == UNREAD  # leaning further: news
    assert seen(CardReading(card=None, confidence=0.57, candidates=[
        (twin_of(other), 0.57), (code, 0.32)])) == UNREAD  # naming another card: news


def _second_joker_only_a_joker_explains(seed: int):
    """A recorded game where a side lays its second joker moving off a card of one colour onto
    a card of the other (only a joker may lie there), having laid a number card Z on a move
    before it. (steps, Z's move, the joker's move)."""
    steps = record_game(seed)
    acts = [a for a, _pos in steps]

    def colour(code: str) -> str:
        return "red" if code[-1] in "DH" else "black"

    for i, action in enumerate(acts):
        words = action.split()
        if words[1] != "move" or words[3] != "JK":
            continue
        frm, to = words[2].split("-")
        board = steps[i - 1][1]["board"]
        left = (board.get(frm, {}).get("cards") or [None])[-1]
        covered = (board.get(to, {}).get("cards") or [None])[-1]
        if frm == to or None in (left, covered) or "JK" in (left, covered) \
                or colour(left) == colour(covered) \
                or not any(a.startswith(words[0]) and a.split()[-1] == "JK" for a in acts[:i]):
            continue
        z = next(a for a in reversed(acts[:i]) if a.startswith(f"{words[0]} move")
                 and a.split()[3][:-1] in ("2", "3", "4", "5", "6", "7", "8", "9", "10"))
        return steps, z, action
    raise AssertionError("no second joker that only a joker explains")


@pytest.mark.parametrize("seed", [12, 21, 26, 28])
def test_a_question_holding_the_last_joker_gives_way_to_a_move_only_a_joker_explains(seed):
    # v3-s173: black's 8H laid on d4 read JK 61 %, JH 37 % and went on as the joker; black's
    # real second joker, laid over a 10H moving off an AC and read as red courts, could then
    # be no card at all: the game held, and re-read the table 30 frames later
    steps, z_move, joker_move = _second_joker_only_a_joker_explains(seed)
    z_cell, z = z_move.split()[2].split("-")[1], z_move.split()[3]
    joker_cell = joker_move.split()[2].split("-")[1]

    def edit(frame):
        _blur_card(frame, z_cell, z, [("JK", 0.61), (z, 0.37)])
        _blur_card(frame, joker_cell, "JK", [("QD", 0.6), ("KD", 0.1)])

    tracker = _track(steps, seed, edit)
    texts = [e.text for e in tracker.events]
    assert joker_move in texts and z_move in texts, tracker.holding
    assert tracker.events[texts.index(joker_move)].question is not None  # asked
    assert not any(t.startswith("table re-read") for t in texts)


def _as_incremental(frames):
    """The frames as the incremental scanner reports them: `changed` names the zones whose
    card or unit differs from the last settled frame (everything, under hands)."""
    last: dict = {}
    for frame in frames:
        now = {name: (c.card.card if c.card else None, c.piece.piece if c.piece else None)
               for name, c in frame.cells.items()}
        now.update({f"init/{side}": p.card if p else None
                    for side, p in frame.initiative.items()})
        frame.changed = set(now) if frame.occluded else {z for z in now if now[z] != last.get(z)}
        if not frame.occluded:
            last = now
        yield frame


def _pile_reread_as_another_court_run(seed: int):
    """A recorded game fed as the incremental scanner reports it (`changed`: the zones whose
    card or unit changed; everything, under hands), where white's first court initiative card
    X reads, from its 9th settled frame on, as another court of its suit on the same pixels.
    (steps, X's action, tracker)."""
    from scanner.detections import CardReading

    steps = record_game(seed)
    drawn = next(a for a, _pos in steps if a.startswith("white initiative")
                 and a.split()[-1] != "JK" and a.split()[-1][:-1] in ("J", "Q", "K"))
    x = drawn.split()[-1]
    other = next(r + x[-1] for r in ("J", "Q", "K") if r + x[-1] != x)
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    seen = 0
    for frame in _as_incremental(frames_of(steps, _empty(steps), seed=seed)):
        pile = frame.initiative.get("white")
        if pile is not None and pile.card == x and not frame.occluded:
            seen += 1
            if seen > 8:
                frame.initiative["white"] = CardReading(
                    corners=pile.corners, card=other, confidence=0.96,
                    candidates=[(other, 0.96), (x, 0.03)])
        tracker.update(frame)
    return steps, drawn, tracker


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_pile_reread_as_another_court_of_its_suit_on_the_same_pixels_is_no_new_card(seed):
    # v10-s403: black's QH, taken from a read JH 91 %, read JH 96 % 25 frames later on the
    # same pixels and taken for black's next initiative card; the rounds went out of step
    steps, drawn, tracker = _pile_reread_as_another_court_run(seed)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


def _first_move_to_another_cell(steps) -> str:
    return next(a for a, _pos in steps
                if a.split()[1] == "move" and len(set(a.split()[2].split("-"))) == 2)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_movement_card_never_found_under_its_unit_is_guessed_and_the_game_goes_on(seed):
    # v7-s307: an orell JD under a white paper token on e2 was never found (the place read
    # bare, the knight on it at 1.0); the game waited for its card and lost 16 moves
    steps = record_game(seed)
    move = _first_move_to_another_cell(steps)
    cell, code = move.split()[2].split("-")[1], move.split()[3]
    hidden = []

    def edit(frame):
        c = frame.cells.get(cell)
        if c is None or c.card is None or c.card.card != code or c.piece is None \
                or c.piece.piece in (None, "empty") or frame.occluded:
            return
        c.empty, c.card = True, None  # the finder missed the card; the unit is read sure
        c.piece = PieceReading(piece=c.piece.piece, confidence=1.0, occupied=True,
                               seen_side=c.piece.piece.split("-")[0])
        hidden.append(frame.frame_index)

    tracker = _track(steps, seed, edit)
    assert hidden
    texts, want = [e.text for e in tracker.events], truth_events(steps)
    k = want.index(move)
    assert len(texts) == len(want), tracker.holding
    assert texts[:k] + texts[k + 1:] == want[:k] + want[k + 1:], tracker.holding
    assert texts[k].split()[:3] == move.split()[:3]  # who moved, from where to where
    guessed = tracker.events[k]
    assert texts[k] == move or any("never found" in f for f in guessed.flags)
    assert not any(t.startswith("table re-read") for t in texts)


def _placing_with_one_unit_read(seed: int, read, after=None):
    """A recorded game fed as the incremental scanner reports it, where the unit black places
    first is read as `read()` (a PieceReading) from the frame it is set down until the
    round starts, and as `after()` (where given) from then until it first leaves its
    card. (steps, tracker)."""
    steps = record_game(seed)
    first = next(a for a, _pos in steps if a.startswith("black place"))
    cell, unit = first.split()[-1], "black-" + first.split()[2]
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    left = False
    for frame in _as_incremental(frames_of(steps, _empty(steps), seed=seed)):
        c = frame.cells.get(cell)
        if not frame.occluded and c is not None and c.piece is not None and not left:
            if c.piece.piece != unit:
                left = left or any(e.text == first for e in tracker.events)
            elif not any(p is not None and p.card for p in frame.initiative.values()):
                c.piece = read()
            elif after is not None:
                c.piece = after()
        tracker.update(frame)
    return steps, tracker


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_unit_read_bare_at_set_up_is_placed_in_its_turn_by_when_its_card_changed(seed):
    # v9-s383: black's pawn on c5, read bare throughout, was placed last when the initiative
    # cards lay, though set down before its rook and king: four placements out of order
    def bare():
        return PieceReading("empty", 0.7, occupied=False)

    steps, tracker = _placing_with_one_unit_read(seed, bare, bare)
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_unit_read_neither_bare_nor_there_on_a_changed_set_up_card_is_placed_when_set_down(
        seed):
    # v7-s307: white's paper queen on g1, read neither bare nor occupied (0.56) from the frame
    # it was set down and bare (0.81) once the round began, was placed only as the initiative
    # cards lay, out of order; taken for a unit as it was set down, it was then taken off as
    # soon as it read bare
    steps, tracker = _placing_with_one_unit_read(
        seed, lambda: PieceReading(None, 0.56), lambda: PieceReading("empty", 0.81,
                                                                     occupied=False))
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding


def _in_place_move_before_a_removal(steps) -> tuple[str, str]:
    """The first move in place (not laying a joker, not over one) whose attack took a unit
    off: (the move, its removal)."""
    events = truth_events(steps)
    for move, removal in itertools.pairwise(events):
        w = move.split()
        if w[1] == "move" and w[2][:2] == w[2][3:] and w[3] != "JK" and "removed" in removal:
            return move, removal
    raise AssertionError("no move in place with a unit taken off")


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_unit_taken_off_before_its_enemy_moved_finds_the_card_laid_in_place(seed):
    # xv-s103: a berlin KD laid over the joker under black's king read JK 55 %, KD 19 %, as
    # the card it covered; the white bishop it took off was logged before black's move, the
    # move itself a hundred frames later, and the next two moves went out of order
    from scanner.detections import CardReading

    steps = record_game(seed)
    move, removal = _in_place_move_before_a_removal(steps)
    cell, code = move.split()[2][:2], move.split()[3]
    before = next(pos for action, pos in reversed(steps[:[a for a, _ in steps].index(move)])
                  if cell in pos["board"])
    covered = before["board"][cell]["cards"][-1]
    tracker = GameTracker({Side(k): v for k, v in steps[0][1]["armies"].items()})
    for frame in _as_incremental(frames_of(steps, _empty(steps), seed=seed)):
        c = frame.cells.get(cell)
        if not frame.occluded and c is not None and c.card is not None \
                and c.card.card == code and c.piece is not None and c.piece.piece:
            # read as the card it covered, the card itself second
            c.card = CardReading(card=None, confidence=0.55,
                                 candidates=[(covered, 0.55), (code, 0.25)])
        tracker.update(frame)
    texts, want = [e.text for e in tracker.events], truth_events(steps)
    k = want.index(move)
    assert texts[:k] == want[:k], tracker.holding
    assert texts[k].split()[:3] == move.split()[:3]  # the move in place, in its turn
    assert texts[k + 1] == removal
    assert not any(t.startswith("table re-read") for t in texts)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_unit_taken_off_a_card_the_camera_then_misses_is_still_taken_off(seed):
    # v5-s239: an orell QD under glare read bare (no card found) once the black bishop on it
    # was taken off; the card seemed to leave the board with it, and the removal was never
    # logged. No card leaves the board: the game's card is kept, the unit read gone
    steps = record_game(seed)
    removal = next(e for e in truth_events(steps) if " removed " in e)
    cell = removal.split()[-1]
    state = {"card": None, "hidden": 0}

    def edit(frame):
        c = frame.cells.get(cell)
        if frame.occluded or c is None or c.card is None:
            return
        if c.piece is not None and c.piece.piece not in (None, "empty"):
            state["card"] = c.card.card  # its unit still there: the card under it read
        elif c.card.card == state["card"]:
            c.empty, c.card = True, None  # bare now, and missed
            state["hidden"] += 1

    tracker = _track(steps, seed, edit)
    assert state["hidden"]
    assert [e.text for e in tracker.events] == truth_events(steps), tracker.holding



@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_read_the_rules_took_for_a_card_in_question_misread_is_no_card_laid_over_it(seed):
    # xv-s103: black's KD laid in place over a joker was asked (JK 58 %, KD 19 %); a re-read
    # named JD sure, a card black's deck had shown bare, before black's next turn, and the
    # rules took it for the question's card misread. A card the question's card could be
    # covered by, it was still taken for one laid over it, and a move that never was followed
    import copy

    from scanner.detections import CardReading

    steps = record_game(seed)
    i, cell, code = _first_move(steps)
    tracker = _track_blurred(steps[:i + 1], seed, {cell: (code, [(code, 0.6), ("JK", 0.4)])})
    key = f"{cell}.card"
    q = tracker._question_on_top(cell)
    assert q is not None and q.chosen == code, tracker.holding
    from engines.royal_battles.cards import CARDS

    other = next(c for c in CARDS if c != "JK" and q.coverable_by(c)
                 and c not in (code, twin_of(code)))
    tracker._believe(key, code, {other})  # what the rules do when they take `other` so
    events = len(tracker.events)
    last = frames_of(steps[:i + 1], _empty(steps), seed=seed)[-1]
    for n in range(12):
        frame = copy.deepcopy(last)
        frame.frame_index = last.frame_index + 1 + n
        frame.cells[cell].card = CardReading(card=other, confidence=0.99,
                                             candidates=[(other, 0.99)])
        tracker.update(frame)
    assert len(tracker.events) == events, [e.text for e in tracker.events[events:]]
    assert tracker.believed()[key] == code



@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_movement_card_read_otherwise_before_its_sides_next_turn_is_one_card_read_two_ways(
        seed):
    # v5-s239: an orell JS laid by black's pawn on f3 read QS 73 %, then JS 100 % before
    # black's next initiative card; taken for a second card laid in place over the QS (the
    # QS for a misread joker), and the next moves came out of order. No turn of that side came
    # between: the move becomes a question weighing both looks
    from scanner.detections import CardReading

    steps = record_game(seed)
    move = _first_move_to_another_cell(steps)
    side, cell, code = move.split()[0], move.split()[2][-2:], move.split()[3]
    other = twin_of(code) if code != "JK" else "QS"
    state = {"pile": None, "done": False, "edited": 0}

    def edit(frame):
        c = frame.cells.get(cell)
        pile = frame.initiative.get(side)
        if frame.occluded or state["done"] or c is None or c.card is None \
                or c.card.card != code or c.piece is None or c.piece.piece in (None, "empty"):
            return
        now = pile.card if pile is not None else None
        if state["pile"] is None:
            state["pile"] = ("seen", now)  # the move's first settled look: read right
            return
        if now != state["pile"][1]:
            state["done"] = True  # its side's next turn: read right from here on
            return
        c.card = CardReading(card=other, confidence=0.99, candidates=[(other, 0.99)])
        state["edited"] += 1

    tracker = _track(steps, seed, edit)
    assert state["edited"]
    texts, want = [e.text for e in tracker.events], truth_events(steps)
    assert len(texts) == len(want), tracker.holding
    k = want.index(move)
    assert texts[:k] + texts[k + 1:] == want[:k] + want[k + 1:], tracker.holding
    assert texts[k].split()[:3] == move.split()[:3]
