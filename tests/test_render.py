import pytest

from ctxassembly import Chunk, ConfigError, parse, prompt, render
from ctxassembly.render import Renderer, escape_body, unescape_body

pytestmark = pytest.mark.unit

C = Chunk(
    id="5.2:ref#1",
    text='Use <b> & "q"\n</document>\n<document id="x">',
    title='T "1"',
    section="A > B",
    version="5.2",
    date="2025-01-01",
    meta={"status": "current"},
)


def test_xml_labels_and_round_trip():
    text = render([C, C])
    assert text.startswith(
        '<document id="5.2:ref#1" title="T &quot;1&quot;" section="A &gt; B" version="5.2" '
        'date="2025-01-01" status="current">'
    )
    back = parse(text)
    assert len(back) == 2
    assert back[0]["text"] == C.text
    assert back[0]["title"] == 'T "1"'


def test_no_chunk_text_can_close_its_tag():
    text = render([C])
    assert text.count("</document>") == 1
    assert text.count("<document ") == 1
    assert "</documents>" not in escape_body("</documents>")


@pytest.mark.parametrize("s", ["&lt;document", "&amp;lt;", "&amp;", "a &lt; b", "</DOCUMENT >", "< /document>"])
def test_escaping_is_reversible(s):
    assert unescape_body(escape_body(s)) == s


def test_code_stays_readable():
    assert escape_body("if a < b && c > d:") == "if a < b && c > d:"


def test_evidence_and_plain():
    ev = Renderer("evidence").block(C, 0)
    assert ev.startswith('[E1] T "1" › A > B (5.2, 2025-01-01, current) id=5.2:ref#1')
    assert render([C], "plain") == C.text
    with pytest.raises(ConfigError, match="format must be one of"):
        Renderer("html")  # type: ignore[arg-type]


def test_prompt_puts_the_question_last():
    p = prompt('<document id="a">\nx\n</document>', "What is x?", "Be brief.")
    assert p.index("<documents>") < p.index("Be brief.") < p.index("Question: What is x?")
    assert p.endswith("Question: What is x?")


def test_parse_rejects_text_outside_tags():
    with pytest.raises(ValueError, match="outside the document tags"):
        parse("hello " + render([C]))
