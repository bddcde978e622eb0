"""The Royal Battles table page, mounted at "/" (see `webui.table.page`)."""

from webui.table.page import blueprint

__all__ = ["blueprint"]
