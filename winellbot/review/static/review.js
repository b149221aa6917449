// One key per decision: the letters on the page's buttons (a, e, d, r, s, m, c, u, n, q) act at once;
// 1-9 toggle the reject reasons; Enter in a section list sends its form. The reviewer can turn the
// single keys off (WCAG 2.1 SC 2.1.4): the choice is kept in this browser; the buttons' access keys
// (the browser's modifier + letter) still work.
// No inline script anywhere: the page's Content-Security-Policy allows only this file.
(function () {
  "use strict";
  var STORE = "winellbot-shortcuts";
  function enabled() {
    try { return window.localStorage.getItem(STORE) !== "off"; } catch (err) { return true; }
  }
  function typing(target) {
    if (!target || !target.tagName) { return false; }
    var tag = target.tagName.toLowerCase();
    return tag === "textarea" || (tag === "input" && target.type !== "checkbox");
  }
  function copy(id) {
    var field = document.getElementById(id), said = document.getElementById("copied");
    if (!field) { return; }
    field.focus();
    field.select();
    var done = function (ok) { if (said) { said.textContent = ok ? "Copied." : "Selected: press Ctrl+C to copy."; } };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(function () { done(true); }, function () { done(false); });
    } else {
      done(false);
    }
  }
  document.addEventListener("DOMContentLoaded", function () {
    var box = document.getElementById("shortcuts");
    if (box) {
      box.checked = enabled();
      box.addEventListener("change", function () {
        try { window.localStorage.setItem(STORE, box.checked ? "on" : "off"); } catch (err) { /* kept for this page */ }
      });
    }
    document.querySelectorAll("[data-copy]").forEach(function (b) {
      b.addEventListener("click", function () { copy(b.dataset.copy); });
    });
  });
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey || typing(e.target)) { return; }
    var box = document.getElementById("shortcuts");
    if (box ? !box.checked : !enabled()) { return; }
    var key = (e.key || "").toLowerCase();
    if (e.target.tagName && e.target.tagName.toLowerCase() === "select") {
      if (key === "enter" && e.target.form) { e.preventDefault(); e.target.form.requestSubmit(); }
      return;
    }
    if (/^[1-9]$/.test(key)) {
      var reason = document.querySelector('input[name="reasons"][data-key="' + key + '"]');
      if (reason) { reason.checked = !reason.checked; e.preventDefault(); }
      return;
    }
    var el = document.querySelector('[data-key="' + key + '"]:not(input)');
    if (!el) { return; }
    e.preventDefault();
    if (el.dataset.focus) {
      var target = document.getElementById(el.dataset.focus);
      if (target) { target.scrollIntoView(); target.focus(); return; }
    }
    if (el.tagName.toLowerCase() === "select") { el.focus(); } else { el.click(); }
  });
  // A form is sent once: a double click or a repeated key does not send it again.
  document.addEventListener("submit", function (e) {
    if (e.target.dataset.sent) { e.preventDefault(); return; }
    e.target.dataset.sent = "1";
  });
}());
