// The WCAG contrast ratio of an element's text against what is drawn behind it
// (tests/web/contrast.py).
(el) => {
  const parse = (s) => { const n = s.match(/[\d.]+/g).map(Number); return [n[0], n[1], n[2], n.length > 3 ? n[3] : 1]; };
  const lum = ([r, g, b]) => { const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const layers = [];
  let base = [255, 255, 255];
  for (let node = el; node; node = node.parentElement) {
    const style = getComputedStyle(node);
    const img = style.backgroundImage;
    const stops = img && img !== 'none' ? img.match(/rgba?\([^)]*\)/g) : null;
    if (stops) { base = stops.map(parse).sort((a, b) => lum(b) - lum(a))[0].slice(0, 3); break; }
    const bg = parse(style.backgroundColor);
    if (bg[3] >= 1) { base = bg.slice(0, 3); break; }
    if (bg[3] > 0) layers.push(bg);
  }
  for (const [r, g, b, a] of layers.reverse()) base = [r * a + base[0] * (1 - a), g * a + base[1] * (1 - a), b * a + base[2] * (1 - a)];
  const fg = parse(getComputedStyle(el).color);
  const text = [fg[0] * fg[3] + base[0] * (1 - fg[3]), fg[1] * fg[3] + base[1] * (1 - fg[3]), fg[2] * fg[3] + base[2] * (1 - fg[3])];
  const [hi, lo] = [lum(text), lum(base)].sort((a, b) => b - a);
  return (hi + 0.05) / (lo + 0.05);
}
