"""The desktop: the web page every view is rendered in, and its native window.

`web/` holds the page (plain ES modules, no CDN) that the controller serves; the
window module opens it in pywebview for `aios start`.
"""
