"""The bot-exclusion templates, read from a page's wikitext: ``{{bots}}`` and ``{{nobots}}``.

English Wikipedia's convention (Template:Bots), in every spelling editors use it:

    {{nobots}}                        no bot may edit
    {{bots|allow=A,B}} / {{nobots|allow=A,B}}   only A and B ("none": no bot; "all": every bot)
    {{bots|deny=A,B}}  / {{nobots|deny=A,B}}    not A or B ("all": no bot; "none": every bot)
    {{bots|optout=T1,T2}}             no messages of these types ("all": no messages)

Names are compared without case, with underscores as spaces and an optional ``User:`` prefix;
the template name may carry ``Template:``, any case and spaces ("No bots"). Templates inside
comments or ``<nowiki>`` do not count. Pywikibot's ``botMayEdit`` does not honour ``optout``
(it only warns) and reads the templates MediaWiki recorded at the last save, so the writer
asks this module as well, on the text it is about to change.
"""
from __future__ import annotations

import mwparserfromhell


def _name(value: str) -> str:
    name = " ".join(value.replace("_", " ").split()).lower()
    return name[5:].strip() if name.startswith("user:") else name


def _template(value: str) -> str:
    name = " ".join(value.replace("_", " ").split()).lower()
    if name.startswith("template:"):
        name = name[len("template:"):]
    return name.replace(" ", "")


def exclusion(text: str, bot_user: str, message_type: str = "") -> str:
    """Why ``text`` excludes the bot ``bot_user`` (sending messages of ``message_type``); "" when it does not."""
    me = _name(bot_user)
    kind = _name(message_type) if message_type else ""
    for tpl in mwparserfromhell.parse(text).filter_templates():
        name = _template(str(tpl.name))
        if name not in ("bots", "nobots"):
            continue
        params = {str(p.name).strip().lower(): {_name(v) for v in str(p.value).split(",") if v.strip()}
                  for p in tpl.params if p.showkey}
        shown = "{{" + str(tpl.name).strip() + "}}"
        if name == "nobots" and not ({"allow", "deny"} & set(params)):
            return f"{shown} excludes every bot"
        if "allow" in params:
            allowed = params["allow"]
            if "none" in allowed or not (allowed & {"all", me}):
                return f"{shown} allows only {', '.join(sorted(allowed))}"
        if "deny" in params and params["deny"] & {"all", me}:
            return f"{shown} denies {', '.join(sorted(params['deny'] & {'all', me}))}"
        if "optout" in params and params["optout"] & {"all", kind} - {""}:
            return f"{shown} opts out of {', '.join(sorted(params['optout'] & {'all', kind}))} messages"
    return ""
