"""Royal Conquest: the Action phase and every Action card."""

from __future__ import annotations

from math import isclose

import pytest

from engines.errors import IllegalActionError
from engines.royal_conquest import (
    ActionKind,
    Defend,
    Options,
    Pass,
    PoisonPick,
    UseAction,
    parse_action,
)
from tests.rc_support import conserved, draw, make_state, names


def act(players=2, stacks=None, actions=None, battlefield=None, hands=None, **kw):
    hands = hands or [["L3"], ["L4"], ["K3"], ["J4"]][:players]
    return make_state(players, phase="action", stacks=stacks, action_hands=actions,
                      battlefield=battlefield, hands=hands, **kw)  # fmt: skip


def use(state, text):
    state.apply(parse_action(text))


def texts(state):
    return [str(a) for a in state.legal_actions()]


def test_action_phase_without_action_cards_is_a_pass():
    state = act()
    assert state.legal_actions() == [Pass()]
    state.apply(Pass())
    assert state.phase == "play" and state.current == 1


def test_thief_takes_one_special_token_card_from_one_player():
    state = act(stacks=[[], ["A1", "B4", "D2"]], actions=[{"thief": 1}, {}])
    assert texts(state) == ["pass", "use thief p1 A1", "use thief p1 D2"]  # not the Castle B4
    use(state, "use thief p1 D2")
    assert names(state.stacks[0]) == ["D2"]
    assert names(state.stacks[1]) == ["A1", "B4"]
    assert state.action_discard[ActionKind.THIEF] == 1
    assert state.phase == "play" and state.current == 1
    conserved(state)


def test_thief_needs_a_victim_with_a_token_card():
    state = act(stacks=[["A1"], ["B4"]], actions=[{"thief": 1}, {}])
    assert texts(state) == ["pass"]  # never from oneself, never a Castle


def test_defend_stops_thief():
    state = act(stacks=[[], ["A1"]], actions=[{"thief": 1}, {"defend": 1}])
    use(state, "use thief p1 A1")
    assert state.phase == "respond" and state.current_player() == 1
    assert state.legal_actions() == [Pass(), Defend()]
    state.apply(Defend())
    assert names(state.stacks[1]) == ["A1"] and state.stacks[0] == []
    assert state.action_discard[ActionKind.DEFEND] == 1
    assert state.phase == "play" and state.current == 1
    conserved(state)


def test_victim_may_let_the_thief_through():
    state = act(stacks=[[], ["A1"]], actions=[{"thief": 1}, {"defend": 1}])
    use(state, "use thief p1 A1")
    state.apply(Pass())
    assert names(state.stacks[0]) == ["A1"]
    assert state.action_hands[1][ActionKind.DEFEND] == 1


def test_potion_as_defend_stops_thief():
    state = act(stacks=[[], ["A1"]], actions=[{"thief": 1}, {"potion": 1}])
    use(state, "use thief p1 A1")
    assert state.legal_actions() == [Pass(), Defend(potion=True)]
    state.apply(Defend(potion=True))
    assert names(state.stacks[1]) == ["A1"]
    assert state.action_discard[ActionKind.POTION] == 1


def test_defend_is_only_an_answer_not_an_action_phase_card():
    state = act(stacks=[[], ["A1"]], actions=[{"defend": 1}, {}])
    assert state.legal_actions() == [Pass()]
    with pytest.raises(IllegalActionError):
        state.apply(Defend())


def test_sweep_takes_one_castle_from_every_player():
    state = act(3, stacks=[[], ["B4", "C3", "A1"], ["D3"]], actions=[{"sweep": 1}, {}, {}])
    use(state, "use sweep")
    assert names(state.stacks[0]) == ["B4", "D3"]
    assert names(state.stacks[1]) == ["A1", "C3"]
    assert state.stacks[2] == []
    conserved(state)


def test_sweep_skips_players_without_castles():
    state = act(3, stacks=[[], ["A1"], ["D3"]], actions=[{"sweep": 1}, {"defend": 1}, {}])
    use(state, "use sweep")
    assert state.phase != "respond"  # p1 is not swept, so is not asked
    assert names(state.stacks[0]) == ["D3"]


def test_one_defend_stops_the_whole_sweep_by_default():
    state = act(3, stacks=[[], ["B4"], ["D3"]], actions=[{"sweep": 1}, {"defend": 1}, {}])
    use(state, "use sweep")
    assert state.current_player() == 1
    state.apply(Defend())
    assert state.stacks[0] == []
    assert names(state.stacks[1]) == ["B4"] and names(state.stacks[2]) == ["D3"]


def test_defend_sweep_self_option_protects_only_the_defender():
    state = act(3, stacks=[[], ["B4"], ["D3"]], actions=[{"sweep": 1}, {}, {"defend": 1}],
                options=Options(defend_sweep="self"))  # fmt: skip
    use(state, "use sweep")
    assert state.current_player() == 2
    state.apply(Defend())
    assert names(state.stacks[0]) == ["B4"] and names(state.stacks[2]) == ["D3"]


def test_reveal_shows_the_target_action_cards_to_the_player_only():
    state = act(actions=[{"reveal": 1}, {"thief": 1, "defend": 1}])
    assert texts(state) == ["pass", "use reveal p1"]
    use(state, "use reveal p1")
    assert state.revealed == [{"viewer": 0, "target": 1, "cards": ["defend", "thief"]}]
    assert state.view(0)["revealed"][0]["cards"] == ["defend", "thief"]
    assert state.view(1)["revealed"] == []
    assert state.view(1)["action_hands"][0] == 0  # the Reveal was discarded
    assert state.view(0)["action_hands"][1] == 2


def test_poison_discards_one_random_action_card():
    state = act(actions=[{"poison": 1}, {"thief": 2, "defend": 1}])
    use(state, "use poison p1")
    assert state.is_chance_node()
    odds = dict((str(a), p) for a, p in state.chance_outcomes())
    assert isclose(odds["poisoned thief"], 2 / 3) and isclose(odds["poisoned defend"], 1 / 3)
    with pytest.raises(IllegalActionError):
        state.apply(PoisonPick(ActionKind.DRAGON))
    state.apply(PoisonPick(ActionKind.DEFEND))
    assert dict(+state.action_hands[1]) == {ActionKind.THIEF: 2}
    assert state.phase == "play" and state.current == 1
    assert state.action_discard[ActionKind.DEFEND] == 1
    conserved(state)


def test_poison_cannot_target_an_empty_hand_and_defend_cannot_stop_it():
    state = act(actions=[{"poison": 1}, {}])
    assert texts(state) == ["pass"]
    state = act(actions=[{"poison": 1}, {"defend": 1}])
    use(state, "use poison p1")
    assert state.phase == "poison"  # no answer window: Defend stops only Thief and Sweep


def test_dragon_reshuffles_the_battlefield_and_redeals_the_same_number():
    state = act(battlefield=["B1", "B2", "B3", "H1"], actions=[{"dragon": 1}, {}])
    use(state, "use dragon")
    assert state.battlefield == [] and len(state.queue) == 4
    for card in ["B1", "D3", "F3", "J3"]:
        draw(state, card)
    assert names(state.battlefield) == ["B1", "D3", "F3", "J3"]
    assert state.phase == "play" and state.current == 1
    # the Dragon's clearing is not a Special Instance: no Action card drawn
    assert sum(state.action_hands[0].values()) == 0
    conserved(state)


def test_dragon_redeal_with_three_matching_cards_is_redealt():
    state = act(battlefield=["B1", "H1", "D3"], actions=[{"dragon": 1}, {}])
    use(state, "use dragon")
    for card in ["B1", "B2", "B3"]:
        draw(state, card)
    assert state.redeals == 1 and state.battlefield == [] and len(state.queue) == 3


def test_dragon_needs_cards_on_the_battlefield():
    state = act(battlefield=[], actions=[{"dragon": 1}, {}])
    assert texts(state) == ["pass"]


def test_potion_acts_as_any_action_card():
    state = act(battlefield=["B1"], stacks=[[], ["A1", "B4"]],
                actions=[{"potion": 1}, {"thief": 1}])  # fmt: skip
    assert texts(state) == [
        "pass", "use potion as thief p1 A1", "use potion as sweep", "use potion as poison p1",
        "use potion as reveal p1", "use potion as dragon",
    ]  # fmt: skip
    use(state, "use potion as thief p1 A1")
    assert names(state.stacks[0]) == ["A1"]
    assert state.action_discard[ActionKind.POTION] == 1


def test_potion_as_thief_is_stopped_by_defend():
    state = act(stacks=[[], ["A1"]], actions=[{"potion": 1}, {"defend": 1}])
    use(state, "use potion as thief p1 A1")
    state.apply(Defend())
    assert names(state.stacks[1]) == ["A1"]


def test_only_one_action_card_per_turn():
    state = act(actions=[{"reveal": 2}, {}])
    use(state, "use reveal p1")
    assert state.phase == "play" and state.current == 1
    assert state.action_hands[0][ActionKind.REVEAL] == 1


def test_action_phase_belongs_to_the_player_whose_turn_it_is():
    state = act(actions=[{}, {"thief": 1}], stacks=[["A1"], []])
    assert state.current_player() == 0
    with pytest.raises(IllegalActionError):
        state.apply(UseAction(ActionKind.THIEF, None, 0, None))


def test_whole_sweep_stopped_by_a_later_defender_protects_everyone():
    state = act(3, stacks=[[], ["B4"], ["D3"]], actions=[{"sweep": 1}, {"defend": 1},
                                                         {"defend": 1}])  # fmt: skip
    use(state, "use sweep")
    state.apply(Pass())  # p1 lets it through...
    assert state.current_player() == 2
    state.apply(Defend())  # ...but p2's Defend stops the whole Sweep
    assert state.stacks[0] == [] and names(state.stacks[1]) == ["B4"]
