"""Flask application factory: one blueprint per page family, mounted under its own prefix.

Blueprints are imported when the app is created, from the table below.
"""

from __future__ import annotations

import importlib

from flask import Flask

# url prefix -> module exposing `blueprint`
BLUEPRINTS: dict[str, str] = {
    "/": "webui.table_page",  # the Royal Battles table page
    "/bc": "webui.battle_cards_page",
    "/rc": "webui.royal_conquest_page",
    "/rbs": "webui.royal_bastards_page",
    "/wlt": "webui.war_lord_tourney_page",
}

MAX_REQUEST_BYTES = 1_000_000


def create_app(config: dict | None = None) -> Flask:
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    if config:
        app.config.update(config)
    for prefix, module_name in BLUEPRINTS.items():
        module = importlib.import_module(module_name)
        app.register_blueprint(module.blueprint, url_prefix=prefix)
    return app
