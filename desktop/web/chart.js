// Charts drawn with plain DOM (bars) and SVG (lines, pie), no library. Labels and
// values are placed as text; a value that is not a number counts as 0.

import { asArray, asText, el, svg } from "./dom.js";

const COLORS = ["#4f8cff", "#22c55e", "#f59e0b", "#ef4444", "#a855f7", "#14b8a6", "#ec4899"];

/** Labels and numeric values of chart `data`, paired up; missing labels get "#n". */
export function chartPoints(data) {
  const values = asArray(data.values);
  const labels = asArray(data.labels);
  const count = Math.max(values.length, labels.length);
  const points = [];
  for (let i = 0; i < count; i += 1) {
    const number = Number(values[i]);
    points.push({
      label: i < labels.length ? asText(labels[i]) : `#${i + 1}`,
      value: Number.isFinite(number) ? number : 0,
    });
  }
  return points;
}

/** Bars scaled to `scale.max` when given (percentages: 100), else to the largest value. */
export function barChart(points, scale = {}) {
  const largest = Math.max(1e-9, ...points.map((p) => Math.abs(p.value)));
  const wanted = Number(scale.max);
  const max = Number.isFinite(wanted) && wanted >= largest ? wanted : largest;
  return el(
    "div",
    { className: "chart-bars" },
    points.map((point, index) =>
      el(
        "div",
        { className: "chart-bar-col" },
        el("span", { className: "chart-value", text: formatNumber(point.value) }),
        el(
          "div",
          { className: "chart-bar-track" },
          el("div", {
            className: "chart-bar",
            style: {
              height: `${Math.max(2, (Math.abs(point.value) / max) * 100)}%`,
              background: COLORS[index % COLORS.length],
            },
          }),
        ),
        el("span", { className: "chart-label", text: point.label, title: point.label }),
      ),
    ),
  );
}

export function lineChart(points) {
  const width = 480;
  const height = 200;
  const pad = 28;
  const values = points.map((p) => p.value);
  const max = Math.max(...values, 0);
  const min = Math.min(...values, 0);
  const span = max - min || 1;
  const step = points.length > 1 ? (width - 2 * pad) / (points.length - 1) : 0;
  const xy = points.map((p, i) => [
    pad + i * step,
    height - pad - ((p.value - min) / span) * (height - 2 * pad),
  ]);
  const root = svg("svg", {
    class: "chart-line",
    viewBox: `0 0 ${width} ${height}`,
    preserveAspectRatio: "xMidYMid meet",
    role: "img",
  });
  root.append(
    svg("line", { x1: pad, y1: height - pad, x2: width - pad, y2: height - pad, class: "axis" }),
    svg("polyline", { points: xy.map(([x, y]) => `${x},${y}`).join(" "), class: "series" }),
  );
  xy.forEach(([x, y], i) => {
    root.append(
      svg("circle", { cx: x, cy: y, r: 3.5, class: "dot" }),
      svg("text", { x, y: y - 8, "text-anchor": "middle", class: "val", text: formatNumber(points[i].value) }),
      svg("text", { x, y: height - 8, "text-anchor": "middle", class: "lbl", text: points[i].label }),
    );
  });
  return root;
}

export function pieChart(points) {
  const total = points.reduce((sum, p) => sum + Math.max(0, p.value), 0) || 1;
  const root = svg("svg", { class: "chart-pie", viewBox: "-110 -110 220 220", role: "img" });
  let angle = -Math.PI / 2;
  points.forEach((point, i) => {
    const share = Math.max(0, point.value) / total;
    const next = angle + share * 2 * Math.PI;
    const large = share > 0.5 ? 1 : 0;
    const [x1, y1] = [100 * Math.cos(angle), 100 * Math.sin(angle)];
    const [x2, y2] = [100 * Math.cos(next), 100 * Math.sin(next)];
    const shape =
      share >= 0.9999
        ? svg("circle", { cx: 0, cy: 0, r: 100, fill: COLORS[i % COLORS.length] })
        : svg("path", {
            d: `M0,0 L${x1},${y1} A100,100 0 ${large} 1 ${x2},${y2} Z`,
            fill: COLORS[i % COLORS.length],
          });
    root.append(shape);
    angle = next;
  });
  const legend = el(
    "ul",
    { className: "chart-legend" },
    points.map((p, i) =>
      el(
        "li",
        {},
        el("span", { className: "swatch", style: { background: COLORS[i % COLORS.length] } }),
        `${p.label}: ${formatNumber(p.value)}`,
      ),
    ),
  );
  return el("div", { className: "chart-pie-wrap" }, root, legend);
}

function formatNumber(value) {
  return Number.isInteger(value) ? String(value) : value.toFixed(2).replace(/\.?0+$/, "");
}
