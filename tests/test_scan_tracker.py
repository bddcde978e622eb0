"""The tracker on synthetic readings of whole recorded games."""

import pytest

from engines.royal_battles import Side
from engines.royal_battles.selfplay import record_game
from scanner.tracker import GameTracker
from tests.tracker_sim import frames_of, reading_of, truth_events


def _empty(steps):
    first = steps[0][1]
    return {"board": {}, "initiative": {"white": None, "black": None}, **{
        k: v for k, v in first.items() if k not in ("board", "initiative")}}


def _run(seed, **kw):
    steps = record_game(seed)
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    tracker = GameTracker(armies)
    for frame in frames_of(steps, _empty(steps), seed=seed, **kw):
        tracker.update(frame)
    return steps, tracker


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


def test_a_flicker_shorter_than_the_settle_time_is_ignored():
    steps = record_game(3)
    armies = {Side(k): v for k, v in steps[0][1]["armies"].items()}
    tracker = GameTracker(armies)
    empty = _empty(steps)
    for i in range(5):
        tracker.update(reading_of(empty, i))
    tracker.update(reading_of(steps[0][1], 5))  # one frame shows a card, then it's gone
    tracker.update(reading_of(steps[0][1], 6))
    for i in range(7, 12):
        tracker.update(reading_of(empty, i))
    assert tracker.events == []


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

    from engines.royal_battles.position import to_json
    from scanner.tracker import replay_journal

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
