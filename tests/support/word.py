"""DOCX files with what Word writes and python-docx has no call for: text boxes, footnotes and
endnotes, and heading numbers. python-docx writes the document, its styles and its package; the
missing XML is added to its parts as Word 2016 writes it (ECMA-376 Part 1: `mc:AlternateContent`
holding a DrawingML text box and its VML fallback, 17.11 notes, 17.9 numbering)."""

from __future__ import annotations

import io
from typing import Any

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_NAMESPACES = (
    f'xmlns:w="{W_NS}" '
    'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" '
    'xmlns:w10="urn:schemas-microsoft-com:office:word"'
)
FILLER = ("The plant runs three shifts and every shift keeps its own log book of readings. " * 8).strip()


def _xml(fragment: str) -> Any:
    from docx.oxml import parse_xml

    return parse_xml(fragment.replace("NAMESPACES", _NAMESPACES))


def _box_paragraphs(sentences: list[str]) -> str:
    return "".join(f"<w:p><w:pPr><w:spacing w:after=\"0\"/></w:pPr><w:r><w:t>{s}</w:t></w:r></w:p>" for s in sentences)


def text_box_run(sentences: list[str]) -> Any:
    """A floating text box as Word writes it: the DrawingML shape, then the same text as VML."""
    content = f"<w:txbxContent>{_box_paragraphs(sentences)}</w:txbxContent>"
    return _xml(f"""<w:r NAMESPACES><mc:AlternateContent>
<mc:Choice Requires="wps"><w:drawing><wp:anchor distT="45720" distB="45720" distL="114300" distR="114300"
 simplePos="0" relativeHeight="251659264" behindDoc="0" locked="0" layoutInCell="1" allowOverlap="1">
 <wp:simplePos x="0" y="0"/>
 <wp:positionH relativeFrom="column"><wp:posOffset>3429000</wp:posOffset></wp:positionH>
 <wp:positionV relativeFrom="paragraph"><wp:posOffset>45720</wp:posOffset></wp:positionV>
 <wp:extent cx="2360930" cy="1404620"/><wp:effectExtent l="0" t="0" r="22860" b="11430"/>
 <wp:wrapSquare wrapText="bothSides"/><wp:docPr id="217" name="Text Box 2"/>
 <wp:cNvGraphicFramePr><a:graphicFrameLocks/></wp:cNvGraphicFramePr>
 <a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape">
  <wps:wsp><wps:cNvSpPr txBox="1"><a:spLocks noChangeArrowheads="1"/></wps:cNvSpPr>
   <wps:spPr bwMode="auto"><a:xfrm><a:off x="0" y="0"/><a:ext cx="2360930" cy="1404620"/></a:xfrm>
    <a:prstGeom prst="rect"><a:avLst/></a:prstGeom></wps:spPr>
   <wps:txbx>{content}</wps:txbx>
   <wps:bodyPr rot="0" vert="horz" wrap="square" anchor="t" anchorCtr="0"><a:spAutoFit/></wps:bodyPr>
  </wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice>
<mc:Fallback><w:pict>
 <v:shapetype id="_x0000_t202" coordsize="21600,21600" o:spt="202" path="m,l,21600r21600,l21600,xe">
  <v:stroke joinstyle="miter"/><v:path gradientshapeok="t" o:connecttype="rect"/></v:shapetype>
 <v:shape id="Text Box 2" o:spid="_x0000_s1026" type="#_x0000_t202"
  style="position:absolute;margin-left:270pt;margin-top:3.6pt;width:185.9pt;height:110.6pt;z-index:251659264">
  <v:textbox style="mso-fit-shape-to-text:t">{content}</v:textbox><w10:wrap type="square"/></v:shape>
</w:pict></mc:Fallback></mc:AlternateContent></w:r>""")


def _notes_part(kind: str, notes: dict[int, str]) -> bytes:
    """word/footnotes.xml or word/endnotes.xml: the two separators Word always writes, then the notes."""
    style = "FootnoteText" if kind == "footnote" else "EndnoteText"
    mark = "footnoteRef" if kind == "footnote" else "endnoteRef"
    body = [f'<w:{kind} w:type="separator" w:id="-1"><w:p><w:pPr><w:spacing w:after="0" w:line="240" '
            f'w:lineRule="auto"/></w:pPr><w:r><w:separator/></w:r></w:p></w:{kind}>',
            f'<w:{kind} w:type="continuationSeparator" w:id="0"><w:p><w:pPr><w:spacing w:after="0" w:line="240" '
            f'w:lineRule="auto"/></w:pPr><w:r><w:continuationSeparator/></w:r></w:p></w:{kind}>']
    for note_id, text in notes.items():
        body.append(f'<w:{kind} w:id="{note_id}"><w:p><w:pPr><w:pStyle w:val="{style}"/></w:pPr>'
                    f'<w:r><w:rPr><w:rStyle w:val="{style[:-4]}Reference"/></w:rPr><w:{mark}/></w:r>'
                    f'<w:r><w:t xml:space="preserve"> {text}</w:t></w:r></w:p></w:{kind}>')
    xml = f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:{kind}s {_NAMESPACES}>{"".join(body)}</w:{kind}s>'
    return xml.encode("utf-8")


def note_reference_run(kind: str, note_id: int) -> Any:
    style = "FootnoteReference" if kind == "footnote" else "EndnoteReference"
    return _xml(f'<w:r NAMESPACES><w:rPr><w:rStyle w:val="{style}"/></w:rPr>'
                f'<w:{kind}Reference w:id="{note_id}"/></w:r>')


def add_notes(document: Any, kind: str, notes: dict[int, str]) -> None:
    """The notes part, its relationship from the document and its entry in the settings."""
    from docx.opc.constants import CONTENT_TYPE, RELATIONSHIP_TYPE
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part

    content_type = CONTENT_TYPE.WML_FOOTNOTES if kind == "footnote" else CONTENT_TYPE.WML_ENDNOTES
    reltype = RELATIONSHIP_TYPE.FOOTNOTES if kind == "footnote" else RELATIONSHIP_TYPE.ENDNOTES
    part = Part(PackURI(f"/word/{kind}s.xml"), content_type, _notes_part(kind, notes), document.part.package)
    document.part.relate_to(part, reltype)
    # In the schema's place: after w:footnotePr (for endnotes), before w:compat and what follows it.
    successors = ("w:endnotePr", "w:compat", "w:docVars", "w:rsids", "m:mathPr", "w:attachedSchema",
                  "w:themeFontLang", "w:clrSchemeMapping", "w:doNotAutoCompressPictures", "w:shapeDefaults",
                  "w:decimalSymbol", "w:listSeparator")
    document.settings.element.insert_element_before(
        _xml(f'<w:{kind}Pr NAMESPACES><w:{kind} w:id="-1"/><w:{kind} w:id="0"/></w:{kind}Pr>'),
        *(successors[1:] if kind == "endnote" else successors))


def add_heading_numbering(document: Any, num_id: int = 101) -> None:
    """A multilevel list linked to Heading 1-3 ("1", "1.1", "1.1.1"), as Word's "Heading" list
    style writes it: the levels name their styles, the styles name the list."""
    texts = [".".join(f"%{n + 1}" for n in range(k + 1)) for k in range(3)]  # %1, %1.%2, %1.%2.%3
    levels = "".join(
        f'<w:lvl w:ilvl="{k}"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:pStyle w:val="Heading{k + 1}"/>'
        f'<w:lvlText w:val="{text}"/><w:lvlJc w:val="left"/>'
        f'<w:pPr><w:ind w:left="{432 + 144 * k}" w:hanging="{432 + 144 * k}"/></w:pPr></w:lvl>'
        for k, text in enumerate(texts)
    )
    abstract = _xml(f'<w:abstractNum NAMESPACES w:abstractNumId="{num_id}"><w:nsid w:val="1F2E3D4C"/>'
                    f'<w:multiLevelType w:val="multilevel"/><w:tmpl w:val="0409001D"/>{levels}</w:abstractNum>')
    add_list(document, abstract, num_id, num_id)
    for k in range(3):
        numpr = document.styles[f"Heading {k + 1}"].element.get_or_add_pPr().get_or_add_numPr()
        if k:
            numpr.get_or_add_ilvl().val = k
        numpr.get_or_add_numId().val = num_id


def add_list(document: Any, abstract: Any, abstract_id: int, num_id: int, start_override: int | None = None) -> None:
    """A list definition (when given) and an instance of it; abstractNums precede nums, as the schema orders them."""
    numbering = document.part.numbering_part.element
    if abstract is not None:
        first_num = numbering.find(f"{{{W_NS}}}num")
        if first_num is None:
            numbering.append(abstract)
        else:
            first_num.addprevious(abstract)
    override = (f'<w:lvlOverride w:ilvl="0"><w:startOverride w:val="{start_override}"/></w:lvlOverride>'
                if start_override is not None else "")
    numbering.append(_xml(f'<w:num NAMESPACES w:numId="{num_id}"><w:abstractNumId w:val="{abstract_id}"/>'
                          f'{override}</w:num>'))


def lettered_list(abstract_id: int) -> Any:
    """A two-level list: "a)", then "i." below it."""
    return _xml(f'<w:abstractNum NAMESPACES w:abstractNumId="{abstract_id}"><w:multiLevelType w:val="hybridMultilevel"/>'
                '<w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/><w:lvlText w:val="%1)"/>'
                '<w:lvlJc w:val="left"/><w:pPr><w:ind w:left="720" w:hanging="360"/></w:pPr></w:lvl>'
                '<w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="lowerRoman"/><w:lvlText w:val="%2."/>'
                '<w:lvlJc w:val="right"/><w:pPr><w:ind w:left="1440" w:hanging="180"/></w:pPr></w:lvl>'
                '</w:abstractNum>')


def number_paragraph(paragraph: Any, num_id: int, level: int = 0) -> None:
    numpr = paragraph._p.get_or_add_pPr().get_or_add_numPr()
    numpr.get_or_add_ilvl().val = level
    numpr.get_or_add_numId().val = num_id


def saved(document: Any) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()
