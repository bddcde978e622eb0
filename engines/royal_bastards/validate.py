"""Validation of a loaded state: shapes and ids (before loading) and the conservation
invariants (after): every card and every Support Token is in exactly one place."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from engines.errors import InvalidPositionError

from .cards import DECKS, DICE, ROLES

if TYPE_CHECKING:
    from .game import GameState

PURPOSES = ("deal", "hand", "attach", "contest", "festival_site", "festival_row")
SCOPES = ("contest", "turn", "game")


def _need(cond: bool, msg: str, field: str) -> None:
    if not cond:
        raise InvalidPositionError(msg, field)


def _is_int(v: Any, lo: int | None = None, hi: int | None = None) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool) and (lo is None or v >= lo)
            and (hi is None or v <= hi))


def _ids(values: Any, known: Any, field: str) -> None:
    _need(isinstance(values, list), "must be a list", field)
    for i, v in enumerate(values):
        _need(isinstance(v, str) and v in known, f"unknown card {v!r}", f"{field}[{i}]")


def _player_index(v: Any, n: int, field: str, allow_none: bool = False) -> None:
    if allow_none and v is None:
        return
    _need(_is_int(v, 0, n - 1), f"must be a player 0..{n - 1}, got {v!r}", field)


def validate_core(state: GameState, d: dict[str, Any]) -> None:
    """Check types and ids of a state dict, naming the offending field."""
    from .game import CONTEST_KINDS, PHASES, TURNS

    cards, n = state.cards, state.n
    territories = state.board.territories
    _need(_is_int(d.get("turn"), 0, TURNS), f"must be 0..{TURNS}", "turn")
    _need(d.get("phase") in PHASES, f"must be one of {PHASES}", "phase")
    step = d.get("step")
    _need(step is None or (isinstance(step, str) and hasattr(state, f"_step_{step}")),
          f"unknown step {step!r}", "step")
    for i, p in enumerate(d["players"]):
        f = f"players[{i}]"
        _need(isinstance(p, dict), "must be an object", f)
        _need(isinstance(p.get("colour"), str), "must be a string", f"{f}.colour")
        for key in ("supply", "pending_global"):
            _need(_is_int(p.get(key), 0), "must be an integer >= 0", f"{f}.{key}")
        _need(_is_int(p.get("rap_adjust")), "must be an integer", f"{f}.rap_adjust")
        _ids(p.get("hand"), cards.chaos, f"{f}.hand")
        _ids(p.get("dealt"), cards.bastards, f"{f}.dealt")
        markers = p.get("markers")
        _need(isinstance(markers, list), "must be a list", f"{f}.markers")
        for j, m in enumerate(markers):
            _need(isinstance(m, list) and len(m) == 2 and isinstance(m[0], str) and _is_int(m[1]),
                  "must be [attribute, amount]", f"{f}.markers[{j}]")
        bastards = p.get("bastards")
        _need(isinstance(bastards, list) and len(bastards) <= 3, "must be a list of <= 3",
              f"{f}.bastards")
        roles = []
        for j, b in enumerate(bastards):
            g = f"{f}.bastards[{j}]"
            _need(isinstance(b, dict) and set(b) == {"card", "role", "location", "fortune",
                                                     "skeleton", "revealed", "moved"},
                  "must have card, role, location, fortune, skeleton, revealed, moved", g)
            _need(b["card"] in cards.bastards, f"unknown bastard {b['card']!r}", f"{g}.card")
            _need(b["role"] in ROLES, f"must be one of {ROLES}", f"{g}.role")
            roles.append(b["role"])
            _need(b["location"] in territories, f"unknown territory {b['location']!r}",
                  f"{g}.location")
            _need(b["fortune"] is None or b["fortune"] in cards.fortunes,
                  f"unknown fortune {b['fortune']!r}", f"{g}.fortune")
            _need(b["skeleton"] is None or b["skeleton"] in cards.skeletons,
                  f"unknown skeleton {b['skeleton']!r}", f"{g}.skeleton")
            _need(isinstance(b["revealed"], bool) and isinstance(b["moved"], bool),
                  "revealed and moved must be booleans", g)
        _need(len(set(roles)) == len(roles), "a role appears twice", f"{f}.bastards")
    for key in ("decks", "discards"):
        piles = d.get(key)
        _need(isinstance(piles, dict) and set(piles) == set(DECKS), f"must have {DECKS}", key)
        for deck in DECKS:
            _ids(piles[deck], cards.deck(deck), f"{key}.{deck}")
    support = d.get("support")
    _need(isinstance(support, dict) and set(support) == set(territories),
          "must have one entry per territory", "support")
    for t, counts in support.items():
        _need(isinstance(counts, list) and len(counts) == n and all(_is_int(c, 0) for c in counts),
              f"must be {n} counts >= 0", f"support.{t}")
    queue = d.get("queue")
    _need(isinstance(queue, list), "must be a list", "queue")
    for i, q in enumerate(queue):
        _need(isinstance(q, dict) and q.get("deck") in DECKS and q.get("purpose") in PURPOSES,
              "must have a known deck and purpose", f"queue[{i}]")
        _player_index(q.get("player"), n, f"queue[{i}].player", allow_none=True)
        _need(q.get("role") is None or q.get("role") in ROLES, "unknown role", f"queue[{i}].role")
    _need(_is_int(d.get("mover"), 0, n), f"must be 0..{n}", "mover")
    for key in ("contested", "award_queue"):
        vals = d.get(key)
        _need(isinstance(vals, list) and all(t in territories for t in vals),
              "must be a list of territories", key)
    for key in ("passed", "placing", "choosing"):
        vals = d.get(key)
        _need(isinstance(vals, list), "must be a list", key)
        for i, v in enumerate(vals):
            _player_index(v, n, f"{key}[{i}]")
    effects = d.get("effects")
    _need(isinstance(effects, list), "must be a list", "effects")
    for i, e in enumerate(effects):
        _need(isinstance(e, dict) and e.get("card") in cards.chaos and e.get("role") in ROLES
              and e.get("scope") in SCOPES, "must have a chaos card, role and scope",
              f"effects[{i}]")
        _player_index(e.get("player"), n, f"effects[{i}].player")
    _ids(d.get("festival_row"), cards.bastards, "festival_row")
    site = d.get("festival_site")
    _need(site is None or site in territories, "unknown territory", "festival_site")
    awards = d.get("awards")
    _need(isinstance(awards, dict), "must be an object", "awards")
    for t, w in awards.items():
        _need(t in territories, "unknown territory", f"awards.{t}")
        _player_index(w, n, f"awards.{t}", allow_none=True)
    _player_index(d.get("winner"), n, "winner", allow_none=True)
    _need(isinstance(d.get("reason"), str), "must be a string", "reason")
    _need(isinstance(d.get("log"), list) and all(isinstance(x, str) for x in d["log"]),
          "must be a list of strings", "log")
    c = d.get("contest")
    if c is None:
        _need(d["phase"] not in ("dice", "rolloff"), "a dice phase needs a contest", "contest")
        return
    _need(isinstance(c, dict), "must be an object or null", "contest")
    _need(c.get("kind") in CONTEST_KINDS, f"must be one of {CONTEST_KINDS}", "contest.kind")
    _need(c.get("territory") is None or c.get("territory") in territories, "unknown territory",
          "contest.territory")
    parts = c.get("participants")
    _need(isinstance(parts, list) and len(parts) >= 1, "must be a list of players",
          "contest.participants")
    for i, p in enumerate(parts):
        _player_index(p, n, f"contest.participants[{i}]")
    _need(isinstance(c.get("firstborn_only"), bool), "must be a boolean", "contest.firstborn_only")
    _need(c.get("card") is None or c.get("card") in cards.contests, "unknown contest card",
          "contest.card")
    for i, x in enumerate(c.get("dice", [])):
        _need(isinstance(x, dict) and x.get("die") in DICE and x.get("role") in ROLES
              and isinstance(x.get("own"), bool) and _is_int(x.get("n"), 0),
              "must have player, role, die, own, n", f"contest.dice[{i}]")
        _player_index(x.get("player"), n, f"contest.dice[{i}].player")
    rolled = c.get("rolled")
    _need(isinstance(rolled, dict), "must be an object", "contest.rolled")
    for p, rolls in rolled.items():
        _need(p.isdigit() and int(p) < n and isinstance(rolls, list), "bad entry",
              f"contest.rolled.{p}")
        for r in rolls:
            _need(isinstance(r, list) and len(r) == 2 and r[0] in DICE
                  and _is_int(r[1], 1, DICE.get(r[0], 10)), "must be [die, value]",
                  f"contest.rolled.{p}")
    groups = c.get("groups")
    _need(isinstance(groups, list) and all(isinstance(g, list) for g in groups), "bad groups",
          "contest.groups")
    _need(isinstance(c.get("rolloff"), list) and isinstance(c.get("rolloff_rolls"), dict),
          "bad roll-off", "contest.rolloff")


def check_invariants(state: GameState) -> None:
    """Conservation: each physical card in exactly one place; each player's Support Tokens
    either in the supply or on the map."""
    cards = state.cards
    where: dict[str, Counter] = {d: Counter(state.decks[d]) + Counter(state.discards[d])
                                 for d in state.decks}
    for p in state.players:
        where["chaos"].update(p.hand)
        where["bastard"].update(p.dealt)
        for b in p.bastards:
            where["bastard"][b.card] += 1
            if b.fortune:
                where["fortune"][b.fortune] += 1
            if b.skeleton:
                where["skeleton"][b.skeleton] += 1
    where["bastard"].update(state.festival_row)
    if state.contest is not None and state.contest.card is not None:
        where["contest"][state.contest.card] += 1
    for deck in state.decks:
        expected = Counter(cards.full_deck(deck))
        if where[deck] != expected:
            extra = where[deck] - expected
            missing = expected - where[deck]
            raise InvalidPositionError(
                f"{deck} cards not conserved: extra {dict(extra)}, missing {dict(missing)}",
                f"decks.{deck}")
    for i, p in enumerate(state.players):
        on_map = sum(counts[i] for counts in state.support.values())
        if p.supply + on_map != state.options.support_tokens:
            raise InvalidPositionError(
                f"supply {p.supply} + {on_map} on the map != {state.options.support_tokens}",
                f"players[{i}].supply")
        if p.pending_global > p.supply:
            raise InvalidPositionError("more Global Support pending than tokens in supply",
                                       f"players[{i}].pending_global")
