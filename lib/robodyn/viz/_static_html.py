"""The static HTML of an interactive figure: precomputed PNG frames switched by a tiny script."""
from __future__ import annotations

import html as _html
import json

from ._common import _CSS_DPI
from .frames import _fmt


_SCRIPT = """<script>(function () {
  function init(root) {
    if (root.getAttribute('data-robodyn-ready')) { return; }
    var node = root.querySelector('script.robodyn-data');
    if (!node) { return; }
    root.setAttribute('data-robodyn-ready', '1');
    var data = JSON.parse(node.textContent);
    var img = root.querySelector('img.robodyn-frame');
    var sliders = root.querySelectorAll('input.robodyn-slider');
    var outs = root.querySelectorAll('output.robodyn-value');
    function update() {
      var k = 0, parts = [];
      for (var i = 0; i < sliders.length; i++) {
        var j = parseInt(sliders[i].value, 10);
        k = k * data.steps[i] + j;
        var text = data.labels[i] + ' = ' + data.values[i][j];
        sliders[i].setAttribute('aria-valuetext', text);
        if (outs[i]) { outs[i].textContent = data.values[i][j]; }
        parts.push(text);
      }
      if (k < data.frames.length) { img.src = data.frames[k]; }
      img.alt = data.alt + ' (' + parts.join(', ') + ')';
    }
    for (var i = 0; i < sliders.length; i++) {
      sliders[i].addEventListener('input', update);
      sliders[i].addEventListener('change', update);
    }
  }
  function all() {
    var roots = document.querySelectorAll('div.robodyn-interactive');
    for (var i = 0; i < roots.length; i++) { init(roots[i]); }
  }
  all();
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', all);
  }
})();</script>"""


_STYLE = ("display:inline-block;max-width:100%;font-family:sans-serif;font-size:0.9em;"
          "margin:0.5em 0")


def _static_html(sliders, frames, start, alt, title, figsize, note):
    """The static rendering: sliders, the start frame, all frames as data URIs in JSON."""
    names = list(sliders)
    width = int(round(figsize[0] * _CSS_DPI))
    k0 = 0
    for name in names:
        k0 = k0 * sliders[name].steps + start[name]
    if len(frames) == 1:                                 # live preview: the default frame only
        k0 = 0
    data = {
        "steps": [sliders[n].steps for n in names],
        "values": [[_fmt(v) for v in sliders[n].values] for n in names],
        "labels": [sliders[n].label or n for n in names],
        "frames": frames,
        "alt": alt,
    }
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    start_parts = ", ".join(f"{sliders[n].label or n} = {_fmt(sliders[n].values[start[n]])}"
                            for n in names)
    rows = []
    disabled = " disabled" if len(frames) == 1 and any(sliders[n].steps > 1 for n in names) \
        else ""
    for n in names:
        s = sliders[n]
        label = _html.escape(s.label or n)
        rows.append(
            f'<label style="display:flex;align-items:center;gap:0.6em;margin:0.2em 0">'
            f'<span style="min-width:6em">{label}</span>'
            f'<input type="range" class="robodyn-slider" data-param="{_html.escape(n)}" '
            f'min="0" max="{s.steps - 1}" step="1" value="{start[n]}" aria-label="{label}" '
            f'aria-valuetext="{label} = {_fmt(s.values[start[n]])}"{disabled} '
            f'style="flex:1">'
            f'<output class="robodyn-value" style="min-width:4em">'
            f'{_fmt(s.values[start[n]])}</output></label>')
    cap = f'<div style="color:#666;font-size:0.85em">{_html.escape(note)}</div>' if note else ""
    return (
        f'<div class="robodyn-interactive" style="{_STYLE};width:{width}px">'
        f'<img class="robodyn-frame" src="{frames[k0]}" '
        f'alt="{_html.escape(alt + " (" + start_parts + ")")}" '
        f'style="width:100%;height:auto;display:block">'
        f'{"".join(rows)}{cap}'
        f'<script type="application/json" class="robodyn-data">{payload}</script>'
        f'{_SCRIPT}</div>')
