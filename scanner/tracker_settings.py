"""How long the tracker waits before it believes the table (shared by its parts)."""

SETTLE_FRAMES = 3  # consecutive settled frames before a change is believed
RE_READ_AFTER = 4  # distinct unexplained table changes in a row before a re-read
TOGETHER = 2  # frames: a card laid and a unit gone beside it, believed this close, are one move
GONE_UNSURE = 12  # unclouded frames a unit's cell read unsure before a later move: it was gone
# frames: a unit taken off and a card newly seen next door with no unit read on it, this close
# either way, are one move whose piece the camera missed (`_taken_off_moved_on`)
MOVED_ON_FRAMES = 12
