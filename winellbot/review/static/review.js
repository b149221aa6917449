// One key per decision: the letters on the page's buttons (a, d, r, s, m, n, q) act at once;
// 1-9 toggle the reject reasons; Enter in the section list approves into that section.
// No inline script anywhere: the page's Content-Security-Policy allows only this file.
(function () {
  "use strict";
  function typing(target) {
    if (!target || !target.tagName) { return false; }
    var tag = target.tagName.toLowerCase();
    return tag === "textarea" || (tag === "input" && target.type !== "checkbox");
  }
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey || typing(e.target)) { return; }
    var key = (e.key || "").toLowerCase();
    if (e.target.tagName && e.target.tagName.toLowerCase() === "select") {
      if (key === "enter" && e.target.form) { e.preventDefault(); e.target.form.requestSubmit(); }
      return;
    }
    if (/^[1-9]$/.test(key)) {
      var box = document.querySelector('input[name="reasons"][data-key="' + key + '"]');
      if (box) { box.checked = !box.checked; e.preventDefault(); }
      return;
    }
    var el = document.querySelector('[data-key="' + key + '"]:not(input)');
    if (!el) { return; }
    e.preventDefault();
    if (el.tagName.toLowerCase() === "select") { el.focus(); } else { el.click(); }
  });
  // A form is sent once: a double click or a repeated key does not send it again.
  document.addEventListener("submit", function (e) {
    if (e.target.dataset.sent) { e.preventDefault(); return; }
    e.target.dataset.sent = "1";
  });
}());
