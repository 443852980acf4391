// DOM building without HTML parsing: every string becomes a text node or a
// property, never markup (SECURITY.md Q2). All other modules build DOM through
// `el` so that no app string can reach innerHTML.

/**
 * Create an element. `props`: className, id, text (textContent), title, dataset
 * (object), style (object of CSS properties), on (object of event listeners),
 * attrs (object of attributes set with setAttribute — never "on*" or "style"),
 * and any other key is assigned as a DOM property (value, type, checked, …).
 * `children`: nodes, strings (become text nodes), null/undefined (skipped), arrays.
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  applyProps(node, props);
  append(node, children);
  return node;
}

/** Same as `el` for SVG elements (charts). */
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "text") node.textContent = asText(value);
    else if (!/^on/i.test(key)) node.setAttribute(key, String(value));
  }
  append(node, children);
  return node;
}

function applyProps(node, props) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null) continue;
    if (key === "text") node.textContent = asText(value);
    else if (key === "className") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key === "style") Object.assign(node.style, value);
    else if (key === "on") {
      for (const [event, handler] of Object.entries(value)) node.addEventListener(event, handler);
    } else if (key === "attrs") {
      for (const [name, attr] of Object.entries(value)) {
        if (/^on/i.test(name) || name === "style") continue;
        node.setAttribute(name, String(attr));
      }
    } else node[key] = value;
  }
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(asText(child)));
  }
}

/** Any value as display text: strings as they are, the rest as compact JSON. */
export function asText(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** A plain object or {} — app `data` may be anything, renderers only read objects. */
export function asObject(value) {
  return value && typeof value === "object" && !Array.isArray(value) ? value : {};
}

/** An array or [] . */
export function asArray(value) {
  return Array.isArray(value) ? value : [];
}

/** Remove every child of `node`. */
export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
}

/** Delay `fn` until `ms` have passed without another call. */
export function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}
