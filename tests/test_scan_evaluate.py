"""Truth comparison used by `royal-table scan --truth`."""

from scanner.evaluate import matched_in_order, summary, truth_events


def test_matched_in_order_counts_the_longest_common_subsequence():
    assert matched_in_order(["a", "b", "c"], ["a", "b", "c"]) == 3
    assert matched_in_order(["a", "x", "c"], ["a", "b", "c"]) == 2
    assert matched_in_order(["c", "b", "a"], ["a", "b", "c"]) == 1
    assert matched_in_order([], ["a"]) == 0


def test_summary_keys_and_spurious():
    s = summary(["a", "x"], ["a", "b"], 10, 9, [10.0, 20.0, 30.0])
    assert s["moves"] == 2 and s["moves_recovered"] == 1 and s["spurious_events"] == 1
    assert s["settled_frames"] == 10 and s["settled_frames_right"] == 9
    assert s["latency_ms_p50"] == 20.0 and s["latency_ms_p95"] == 30.0


def test_truth_events_include_removals_after_attacks():
    unit = {"side": "black", "kind": "pawn", "injury": 0}
    rows = [
        {"actions": ["white move c2-c3 3H"],
         "position": {"board": {"c3": {"unit": {"side": "white", "kind": "king"}},
                                "c4": {"unit": unit}}}},
        {"actions": ["white attack c4 easy"],
         "position": {"board": {"c3": {"unit": {"side": "white", "kind": "king"}},
                                "c4": {}}}},
    ]
    assert truth_events(rows) == ["white move c2-c3 3H", "black pawn removed c4"]


def test_settled_frames_count_the_reading_the_live_game_and_the_record():
    from scanner.evaluate import SettledFrames

    a, b = {"a1.card": "2C"}, {"a1.card": "3C"}
    s = SettledFrames()
    # a stretch showing b: the reading gets it at once, the live game only on its last frame
    s.settled(b, read=b, tracked=a)
    s.settled(b, read=b, tracked=a)
    s.settled(b, read={"a1.card": "?"}, tracked=b)
    s.unsettled()
    # a stretch the game never caught up with: the record is wrong for all of it
    s.settled(a, read=a, tracked=b)
    s.settled(a, read=a, tracked=b)
    s.unsettled()
    s.unsettled()  # hands over the table twice: nothing to close
    assert (s.frames, s.read_right, s.tracked_right, s.recorded_right) == (5, 4, 1, 3)
    got = summary([], [], s.frames, s.read_right, [1.0], s.tracked_right,
                  recorded_right=s.recorded_right)
    assert got["settled_frames_recorded_right"] == 3
    assert got["settled_frames_tracked_right"] == 1
