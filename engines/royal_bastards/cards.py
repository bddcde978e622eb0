"""Card data for Royal Bastards: the schema, the declarative effect language and its validation.

The rulebook does not print the cards' contents, so every card is data (see SCHEMA.md). A card
set is a JSON object; `load_card_set` validates it and returns a frozen `CardSet`. Effects are
small declarative records (`Effect`) guarded by an optional `Condition` on the Bastard's race,
class and role and on the colour/race of the Territory it stands in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from engines.errors import InvalidPositionError, ParseError

SCHEMA_ID = "royal-bastards-cards/1"
ATTRIBUTES = ("might", "magic", "mastery", "movement")
ROLES = ("firstborn", "champion", "herald")
ROLE_DIE = {"firstborn": "d10", "champion": "d8", "herald": "d6"}
DICE = {"d6": 6, "d8": 8, "d10": 10}
TIMINGS = ("anytime", "movement", "contest", "end_game")
TARGETS = ("own", "rival", "any")
DECKS = ("bastard", "skeleton", "fortune", "contest", "chaos")

# effect kind -> where it may appear
EFFECT_KINDS = (
    "modify",  # attribute +/- amount (static while the card is in effect)
    "extra_die",  # roll `count` extra dice of type `die` in contests (static)
    "support",  # place (or remove, if negative) support tokens `where` (immediate)
    "global_support",  # gain global support tokens to place anywhere (immediate)
    "move_to",  # move the target Bastard to `to` (immediate; Movement chaos only)
    "draw_chaos",  # draw chaos cards, up to the hand limit (immediate)
    "hand_limit",  # raise/lower the hand limit (static; Fortune/Skeleton only)
    "rap",  # Royal Approval Points at the end of the game
    "reveal_skeleton",  # reveal the target Bastard's Skeleton (immediate; Chaos only)
)
STATIC_KINDS = ("modify", "extra_die", "hand_limit", "rap")
ALLOWED_KINDS = {
    "fortune": {"modify", "extra_die", "hand_limit", "rap", "support", "global_support",
                "draw_chaos"},
    "skeleton": {"modify", "extra_die", "hand_limit", "rap", "support", "global_support",
                 "draw_chaos"},
    "contest": {"modify", "extra_die"},
    "reward": {"support", "global_support", "draw_chaos", "modify", "rap"},
    "chaos": set(EFFECT_KINDS) - {"hand_limit"},
}
CONDITION_LIST_KEYS = ("race", "class", "role", "territory", "territory_colour",
                       "territory_race", "attribute")
CONDITION_BOOL_KEYS = ("own_race_territory", "in_hometown")


def _fail(msg: str, path: str) -> InvalidPositionError:
    return InvalidPositionError(msg, path)


def _str(obj: dict, key: str, path: str, *, optional: bool = False) -> str | None:
    value = obj.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise _fail(f"must be a non-empty string, got {value!r}", f"{path}.{key}")
    return value


def _int(obj: dict, key: str, path: str, default: int | None = None, lo: int | None = None,
         hi: int | None = None) -> int:
    value = obj.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(f"must be an integer, got {value!r}", f"{path}.{key}")
    if lo is not None and value < lo:
        raise _fail(f"must be >= {lo}, got {value}", f"{path}.{key}")
    if hi is not None and value > hi:
        raise _fail(f"must be <= {hi}, got {value}", f"{path}.{key}")
    return value


@dataclass(frozen=True)
class Condition:
    """All listed constraints must hold for the Bastard the effect applies to (empty: always)."""

    race: tuple[str, ...] = ()
    klass: tuple[str, ...] = ()
    role: tuple[str, ...] = ()
    territory: tuple[str, ...] = ()
    territory_colour: tuple[str, ...] = ()
    territory_race: tuple[str, ...] = ()
    attribute: tuple[str, ...] = ()  # the attribute being contested
    own_race_territory: bool | None = None
    in_hometown: bool | None = None

    def is_empty(self) -> bool:
        return self == Condition()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in CONDITION_LIST_KEYS:
            value = getattr(self, "klass" if key == "class" else key)
            if value:
                out[key] = list(value)
        for key in CONDITION_BOOL_KEYS:
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out

    def __str__(self) -> str:
        return ",".join(
            f"{k}={'|'.join(v) if isinstance(v, list) else str(v).lower()}"
            for k, v in self.to_dict().items()
        )

    @staticmethod
    def from_dict(data: Any, path: str) -> Condition:
        if data is None:
            return Condition()
        if not isinstance(data, dict):
            raise _fail("must be an object", path)
        unknown = set(data) - set(CONDITION_LIST_KEYS) - set(CONDITION_BOOL_KEYS)
        if unknown:
            raise _fail(f"unknown condition key(s) {sorted(unknown)}", path)
        kwargs: dict[str, Any] = {}
        for key in CONDITION_LIST_KEYS:
            if key in data:
                value = data[key]
                if isinstance(value, str):
                    value = [value]
                if not isinstance(value, list) or not value or not all(
                        isinstance(v, str) and v for v in value):
                    raise _fail("must be a non-empty list of strings", f"{path}.{key}")
                if key == "role" and not set(value) <= set(ROLES):
                    raise _fail(f"roles must be among {ROLES}", f"{path}.{key}")
                if key == "attribute" and not set(value) <= set(ATTRIBUTES):
                    raise _fail(f"attributes must be among {ATTRIBUTES}", f"{path}.{key}")
                kwargs["klass" if key == "class" else key] = tuple(value)
        for key in CONDITION_BOOL_KEYS:
            if key in data:
                if not isinstance(data[key], bool):
                    raise _fail("must be true or false", f"{path}.{key}")
                kwargs[key] = data[key]
        return Condition(**kwargs)


@dataclass(frozen=True)
class Effect:
    """One declarative effect. `amount` is signed; `cond` restricts whom/where it applies."""

    kind: str
    amount: int = 0
    attribute: str | None = None  # modify: an attribute, "contest" (the contested one) or "all"
    die: str | None = None  # extra_die
    count: int = 1  # extra_die
    where: str = "here"  # support: "here" (the Bastard's Territory) or "hometown"
    to: str | None = None  # move_to: "hometown", "capital" or a Territory id
    cond: Condition = field(default_factory=Condition)

    def __str__(self) -> str:
        if self.kind == "modify":
            text = f"{self.attribute}{self.amount:+d}"
        elif self.kind == "extra_die":
            text = f"+{self.count}{self.die}"
        elif self.kind == "support":
            text = f"support{self.amount:+d}@{self.where}"
        elif self.kind == "move_to":
            text = f"move_to:{self.to}"
        elif self.kind == "reveal_skeleton":
            text = "reveal_skeleton"
        else:
            text = f"{self.kind}{self.amount:+d}"
        return f"{text}[{self.cond}]" if not self.cond.is_empty() else text

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == "modify":
            out.update(attribute=self.attribute, amount=self.amount)
        elif self.kind == "extra_die":
            out.update(die=self.die, count=self.count)
        elif self.kind == "support":
            out.update(amount=self.amount, where=self.where)
        elif self.kind == "move_to":
            out.update(to=self.to)
        elif self.kind != "reveal_skeleton":
            out.update(amount=self.amount)
        if not self.cond.is_empty():
            out["if"] = self.cond.to_dict()
        return out

    @staticmethod
    def from_dict(data: Any, path: str) -> Effect:
        if not isinstance(data, dict):
            raise _fail("an effect must be an object", path)
        kind = data.get("kind")
        if kind not in EFFECT_KINDS:
            raise _fail(f"unknown effect kind {kind!r} (known: {', '.join(EFFECT_KINDS)})",
                        f"{path}.kind")
        allowed = {"kind", "if"} | {
            "modify": {"attribute", "amount"}, "extra_die": {"die", "count"},
            "support": {"amount", "where"}, "move_to": {"to"}, "reveal_skeleton": set(),
        }.get(kind, {"amount"})
        unknown = set(data) - allowed
        if unknown:
            raise _fail(f"unknown key(s) {sorted(unknown)} for a {kind} effect", path)
        cond = Condition.from_dict(data.get("if"), f"{path}.if")
        if kind == "modify":
            attribute = data.get("attribute")
            if attribute not in (*ATTRIBUTES, "contest", "all"):
                raise _fail(f"must be one of {ATTRIBUTES} or 'contest' or 'all', got "
                            f"{attribute!r}", f"{path}.attribute")
            amount = _int(data, "amount", path)
            if amount == 0:
                raise _fail("must not be 0", f"{path}.amount")
            return Effect(kind, amount=amount, attribute=attribute, cond=cond)
        if kind == "extra_die":
            die = data.get("die")
            if die not in DICE:
                raise _fail(f"must be one of {tuple(DICE)}, got {die!r}", f"{path}.die")
            return Effect(kind, die=die, count=_int(data, "count", path, 1, lo=1, hi=5),
                          cond=cond)
        if kind == "support":
            amount = _int(data, "amount", path, lo=-20, hi=20)
            if amount == 0:
                raise _fail("must not be 0", f"{path}.amount")
            where = data.get("where", "here")
            if where not in ("here", "hometown"):
                raise _fail(f"must be 'here' or 'hometown', got {where!r}", f"{path}.where")
            return Effect(kind, amount=amount, where=where, cond=cond)
        if kind == "move_to":
            return Effect(kind, to=_str(data, "to", path), cond=cond)
        if kind == "reveal_skeleton":
            return Effect(kind, cond=cond)
        if kind in ("global_support", "draw_chaos"):
            return Effect(kind, amount=_int(data, "amount", path, lo=1, hi=20), cond=cond)
        amount = _int(data, "amount", path, lo=-50, hi=50)
        if amount == 0:
            raise _fail("must not be 0", f"{path}.amount")
        return Effect(kind, amount=amount, cond=cond)


class _Card:
    """Cards (and tiles) read as their id in the notation."""

    id: str

    def __str__(self) -> str:
        return self.id


@dataclass(frozen=True)
class Territory(_Card):
    id: str
    name: str
    rap: int  # Royal Approval Points
    race: str | None  # None for Joda City
    colour: str
    capital: bool = False  # Joda City: the First Player's tile and the Turn 9 Festival


@dataclass(frozen=True)
class BastardCard(_Card):
    id: str
    name: str
    race: str
    klass: str
    attributes: tuple[int, int, int, int]  # might, magic, mastery, movement
    hometown: str

    def attr(self, attribute: str) -> int:
        return self.attributes[ATTRIBUTES.index(attribute)]


@dataclass(frozen=True)
class EffectCard(_Card):
    """A Skeleton or Fortune card."""

    id: str
    name: str
    effects: tuple[Effect, ...]
    count: int = 1


@dataclass(frozen=True)
class ContestCard(_Card):
    id: str
    name: str
    attribute: str
    effects: tuple[Effect, ...]  # modifiers for the Bastards in this contest
    first: tuple[Effect, ...]  # reward of the winner
    loser: tuple[Effect, ...]  # reward of each loser
    count: int = 1


@dataclass(frozen=True)
class ChaosCard(_Card):
    id: str
    name: str
    timing: str
    target: str  # whose Bastard it may target: own, rival, any
    effects: tuple[Effect, ...]
    count: int = 1


@dataclass(frozen=True)
class Festival:
    turn: int
    name: str
    colour: str
    global_support: tuple[int, ...]  # by finishing place (1st, 2nd, ...); missing places get 0

    def reward(self, place: int) -> int:
        return self.global_support[place] if place < len(self.global_support) else 0


@dataclass(frozen=True)
class CardSet:
    label: str
    description: str
    territories: dict[str, Territory]
    bastards: dict[str, BastardCard]
    skeletons: dict[str, EffectCard]
    fortunes: dict[str, EffectCard]
    contests: dict[str, ContestCard]
    chaos: dict[str, ChaosCard]
    festivals: dict[int, Festival]
    source: dict = field(compare=False, repr=False, default_factory=dict)

    @property
    def capital(self) -> str:
        return next(t.id for t in self.territories.values() if t.capital)

    def deck(self, name: str) -> dict[str, Any]:
        return {"bastard": self.bastards, "skeleton": self.skeletons, "fortune": self.fortunes,
                "contest": self.contests, "chaos": self.chaos}[name]

    def full_deck(self, name: str) -> list[str]:
        """Every physical card of a deck, ids repeated by `count`, sorted."""
        cards = self.deck(name)
        return sorted(cid for cid, card in cards.items() for _ in range(getattr(card, "count", 1)))

    def card(self, deck: str, card_id: str) -> Any:
        try:
            return self.deck(deck)[card_id]
        except KeyError:
            raise ParseError(f"unknown {deck} card {card_id!r}") from None

    def to_dict(self) -> dict:
        return self.source


def _effects(data: Any, path: str, where: str) -> tuple[Effect, ...]:
    if data is None:
        return ()
    if not isinstance(data, list):
        raise _fail("must be a list of effects", path)
    out = []
    for i, item in enumerate(data):
        eff = Effect.from_dict(item, f"{path}[{i}]")
        if eff.kind not in ALLOWED_KINDS[where]:
            raise _fail(f"a {eff.kind} effect is not allowed on a {where} card",
                        f"{path}[{i}].kind")
        out.append(eff)
    return tuple(out)


def _section(data: dict, key: str) -> list[dict]:
    items = data.get(key)
    if not isinstance(items, list) or not items:
        raise _fail("must be a non-empty list", key)
    ids: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise _fail("must be an object", f"{key}[{i}]")
        cid = _str(item, "id", f"{key}[{i}]")
        _str(item, "name", f"{key}[{i}]")
        if cid in ids:
            raise _fail(f"duplicate id {cid!r}", f"{key}[{i}].id")
        if any(c.isspace() for c in cid) or ":" in cid or "@" in cid:
            raise _fail(f"id {cid!r} must not contain spaces, ':' or '@'", f"{key}[{i}].id")
        ids.add(cid)
    return items


def load_card_set(data: Any) -> CardSet:
    """Validate a card-set dict (see SCHEMA.md) and build the CardSet. Raises
    InvalidPositionError naming the offending field."""
    if not isinstance(data, dict):
        raise _fail("a card set must be a JSON object", "cards")
    if data.get("schema") != SCHEMA_ID:
        raise _fail(f"must be {SCHEMA_ID!r}, got {data.get('schema')!r}", "schema")
    label = _str(data, "label", "cards")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise _fail("must be a string", "description")

    territories: dict[str, Territory] = {}
    for i, t in enumerate(_section(data, "territories")):
        p = f"territories[{i}]"
        race = _str(t, "race", p, optional=True)
        capital = t.get("capital", False)
        if not isinstance(capital, bool):
            raise _fail("must be true or false", f"{p}.capital")
        territories[t["id"]] = Territory(t["id"], t["name"], _int(t, "rap", p, lo=0, hi=49), race,
                                         _str(t, "colour", p), capital)
    capitals = [t.id for t in territories.values() if t.capital]
    if len(capitals) != 1:
        raise _fail(f"exactly one territory must be the capital (Joda City), got {capitals}",
                    "territories")

    bastards: dict[str, BastardCard] = {}
    for i, b in enumerate(_section(data, "bastards")):
        p = f"bastards[{i}]"
        attrs = b.get("attributes")
        if not isinstance(attrs, dict) or set(attrs) != set(ATTRIBUTES):
            raise _fail(f"must be an object with exactly {ATTRIBUTES}", f"{p}.attributes")
        values = tuple(_int(attrs, a, f"{p}.attributes", lo=0, hi=20) for a in ATTRIBUTES)
        home = _str(b, "hometown", p)
        if home not in territories:
            raise _fail(f"unknown territory {home!r}", f"{p}.hometown")
        bastards[b["id"]] = BastardCard(b["id"], b["name"], _str(b, "race", p),
                                        _str(b, "class", p), values, home)  # type: ignore[arg-type]

    def effect_cards(key: str) -> dict[str, EffectCard]:
        out = {}
        for i, c in enumerate(_section(data, key)):
            p = f"{key}[{i}]"
            out[c["id"]] = EffectCard(c["id"], c["name"],
                                      _effects(c.get("effects"), f"{p}.effects", key[:-1]),
                                      _int(c, "count", p, 1, lo=1, hi=20))
        return out

    skeletons = effect_cards("skeletons")
    fortunes = effect_cards("fortunes")

    contests: dict[str, ContestCard] = {}
    for i, c in enumerate(_section(data, "contests")):
        p = f"contests[{i}]"
        attribute = c.get("attribute")
        if attribute not in ATTRIBUTES:
            raise _fail(f"must be one of {ATTRIBUTES}, got {attribute!r}", f"{p}.attribute")
        rewards = c.get("rewards", {})
        if not isinstance(rewards, dict) or set(rewards) - {"first", "loser"}:
            raise _fail("must be an object with keys 'first' and 'loser'", f"{p}.rewards")
        contests[c["id"]] = ContestCard(
            c["id"], c["name"], attribute, _effects(c.get("effects"), f"{p}.effects", "contest"),
            _effects(rewards.get("first"), f"{p}.rewards.first", "reward"),
            _effects(rewards.get("loser"), f"{p}.rewards.loser", "reward"),
            _int(c, "count", p, 1, lo=1, hi=20))

    chaos: dict[str, ChaosCard] = {}
    for i, c in enumerate(_section(data, "chaos")):
        p = f"chaos[{i}]"
        timing = c.get("timing")
        if timing not in TIMINGS:
            raise _fail(f"must be one of {TIMINGS}, got {timing!r}", f"{p}.timing")
        target = c.get("target", "own")
        if target not in TARGETS:
            raise _fail(f"must be one of {TARGETS}, got {target!r}", f"{p}.target")
        effects = _effects(c.get("effects"), f"{p}.effects", "chaos")
        if not effects:
            raise _fail("a chaos card needs at least one effect", f"{p}.effects")
        for j, e in enumerate(effects):
            if e.kind == "move_to" and timing != "movement":
                raise _fail("move_to is only allowed on Movement chaos cards",
                            f"{p}.effects[{j}]")
            if e.kind == "rap" and timing != "end_game":
                raise _fail("rap is only allowed on End Game chaos cards", f"{p}.effects[{j}]")
            if e.kind == "move_to" and e.to not in ("hometown", "capital", *territories):
                raise _fail(f"unknown destination {e.to!r}", f"{p}.effects[{j}].to")
        chaos[c["id"]] = ChaosCard(c["id"], c["name"], timing, target, effects,
                                   _int(c, "count", p, 1, lo=1, hi=20))

    festivals: dict[int, Festival] = {}
    fest = data.get("festivals")
    if not isinstance(fest, list):
        raise _fail("must be a list of the three Festivals (turns 3, 6 and 9)", "festivals")
    for i, f in enumerate(fest):
        p = f"festivals[{i}]"
        if not isinstance(f, dict):
            raise _fail("must be an object", p)
        turn = _int(f, "turn", p)
        if turn not in (3, 6, 9) or turn in festivals:
            raise _fail(f"must be 3, 6 or 9 and not repeated, got {turn}", f"{p}.turn")
        rewards = f.get("global_support")
        if not isinstance(rewards, list) or not rewards or not all(
                isinstance(r, int) and not isinstance(r, bool) and 0 <= r <= 30 for r in rewards):
            raise _fail("must be a non-empty list of integers 0..30 (by place)",
                        f"{p}.global_support")
        festivals[turn] = Festival(turn, _str(f, "name", p), _str(f, "colour", p), tuple(rewards))
    if set(festivals) != {3, 6, 9}:
        raise _fail("must define the Festivals of turns 3, 6 and 9", "festivals")
    return CardSet(label, description, territories, bastards, skeletons, fortunes, contests,
                   chaos, festivals, source=data)


def load_card_set_json(text: str) -> CardSet:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"card set is not valid JSON: {exc.msg} at line {exc.lineno}") from None
    return load_card_set(data)


_SAMPLE: CardSet | None = None


def sample_card_set() -> CardSet:
    """The bundled SAMPLE card set (invented contents; not the printed cards)."""
    global _SAMPLE
    if _SAMPLE is None:
        text = resources.files(__package__).joinpath("sample_cards.json").read_text("utf-8")
        _SAMPLE = load_card_set_json(text)
    return _SAMPLE
