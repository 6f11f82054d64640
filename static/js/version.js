// The version page: its review panel, status and history follow the review live over a WebSocket (live.js).
// The server renders each fragment for this page's user (while the vote is open, everyone gets the sealed
// tally: the turnout only) and this file only places it. It still trusts none of it, as run.js does: an
// event must be the three fragments the server renders, each one clean element for the element it
// replaces, its forms posting only to this version's review actions, or it is refused whole. Without JavaScript the page is the
// same, less the live part: every form posts and the server redirects back to the page.
(function () {
  "use strict";

  const page = document.getElementById("version-page");
  if (!page || page.classList.contains("printing") || !window.DeskLive) return;
  const versionId = page.dataset.versionId;
  const live = document.getElementById("live");

  // --- what may be inserted

  const HTML_NS = "http://www.w3.org/1999/xhtml";
  const ELEMENTS = new Set(
    (
      "a b br button code div em fieldset form h2 h3 i input label legend li ol p section small span strong " +
      "textarea time ul"
    ).split(" "),
  );
  const ATTRIBUTES = new Set(
    "class id title href role name value type required checked rows maxlength method action datetime".split(" "),
  );
  const INPUT_TYPES = new Set(["radio", "text", "hidden"]);
  const ACTIONS = new Set(["vote", "recuse", "approve", "request-changes", "publish"]);

  function sameOriginPath(value) {
    try {
      const url = new URL(value, location.href);
      return url.origin === location.origin ? url.pathname : null;
    } catch {
      return null;
    }
  }

  // A form may only post to one of this version's review actions.
  function reviewAction(value) {
    const path = sameOriginPath(value);
    const match = path && /^\/versions\/(\d+)\/([a-z-]+)\/$/.exec(path);
    return Boolean(match) && match[1] === versionId && ACTIONS.has(match[2]);
  }

  // Whether every element and attribute is one the server renders on this page.
  function clean(root) {
    for (const element of root.querySelectorAll("*")) {
      if (element.namespaceURI !== HTML_NS || !ELEMENTS.has(element.localName)) return false;
      for (const { name, value } of element.attributes) {
        const allowed = ATTRIBUTES.has(name) || /^data-[a-z0-9-]+$/.test(name) || /^aria-[a-z]+$/.test(name);
        if (!allowed) return false;
        if (name === "href" && sameOriginPath(value) === null) return false;
      }
      if (element.localName === "form") {
        if (element.getAttribute("method") !== "post" || !reviewAction(element.getAttribute("action"))) return false;
      }
      if (element.localName === "input") {
        const type = element.getAttribute("type");
        if (!INPUT_TYPES.has(type)) return false;
        if (type === "hidden" && element.getAttribute("name") !== "csrfmiddlewaretoken") return false;
      }
      if (element.localName === "button" && element.getAttribute("type") !== "submit") return false;
      if ((element.localName === "input" || element.localName === "textarea") && !element.closest("form")) {
        return false;
      }
    }
    return true;
  }

  // The one clean element ``html`` is made of, if it has the given id and tag; otherwise null. Checked while
  // it is still in the parser's window-less document: nothing in it loads before it has passed.
  function single(html, id, tag) {
    const element = window.DeskLive.single(html, clean);
    return element && element.id === id && element.localName === tag ? element : null;
  }

  const PARTS = [
    { key: "badge", id: "version-status", tag: "span" },
    { key: "review", id: "review", tag: "section" },
    { key: "history", id: "history-list", tag: "ol" },
  ];

  function checked(event) {
    const refuse = (reason) => {
      console.warn(`version page: refused a live event (${reason})`);
      return null;
    };
    if (!event || typeof event !== "object" || event.kind !== "review") return refuse("not an event");
    if (event.version_id !== versionId) return refuse("another version's event");
    if (typeof event.status !== "string" || !/^[a-z_]+$/.test(event.status)) return refuse("no status");
    const parts = [];
    for (const { key, id, tag } of PARTS) {
      const current = document.getElementById(id);
      const replacement = single(event[key], id, tag);
      if (!current || !page.contains(current) || current.localName !== tag) return refuse(`no ${id} here`);
      if (!replacement) return refuse(`not one clean ${id}`);
      parts.push({ current, replacement });
    }
    if (parts[1].replacement.querySelector("[id='version-status'], [id='history-list'], [id='review']")) {
      return refuse("nested targets");
    }
    return parts;
  }

  // --- applying an event

  const STAND_IN = "filled-in-by-the-page"; // memos.views.version_socket.FILLED_IN_BY_THE_PAGE

  // The token Django put into this page's own forms (every signed-in page has one: the logout form).
  function csrfToken() {
    for (const input of document.querySelectorAll("input[name=csrfmiddlewaretoken]")) {
      if (input.value && input.value !== STAND_IN) return input.value;
    }
    return "";
  }

  // The server renders socket fragments without a real CSRF token (it has no request to mint one for), so
  // the page's own goes in its place.
  function fillTokens(root, token) {
    for (const input of root.querySelectorAll("input[name=csrfmiddlewaretoken]")) input.value = token;
  }

  // What this person has typed or chosen in a form that is still there after the swap stays as they left it.
  function carryOver(from, to) {
    const typed = [];
    for (const field of from.querySelectorAll("form[id] textarea, form[id] input[type=text]")) {
      if (field.value !== field.defaultValue) typed.push(field);
    }
    for (const field of typed) {
      const twin = to.querySelector(`form[id="${CSS.escape(field.form.id)}"] [name="${CSS.escape(field.name)}"]`);
      if (twin && twin.localName === field.localName) twin.value = field.value;
    }
    for (const radio of from.querySelectorAll("form[id] input[type=radio]")) {
      if (radio.checked === radio.defaultChecked) continue;
      const twin = to.querySelector(
        `form[id="${CSS.escape(radio.form.id)}"] input[type=radio][name="${CSS.escape(radio.name)}"]` +
          `[value="${CSS.escape(radio.value)}"]`,
      );
      if (twin) twin.checked = radio.checked;
    }
    const focused = from.contains(document.activeElement) ? document.activeElement : null;
    if (focused?.form?.id && focused.name) {
      return () => {
        const twin = to.querySelector(`form[id="${CSS.escape(focused.form.id)}"] [name="${CSS.escape(focused.name)}"]`);
        if (!twin) return;
        twin.focus();
        if (typeof focused.selectionStart === "number" && typeof twin.setSelectionRange === "function") {
          try {
            twin.setSelectionRange(focused.selectionStart, focused.selectionEnd);
          } catch {
            // a radio button has no selection
          }
        }
      };
    }
    return () => {};
  }

  const CHANGED = "just-changed";

  // The element without its CSRF tokens (the page's differ from the socket's stand-in) or the mark this
  // file sets: what to compare to see whether anything changed.
  function comparable(element) {
    const copy = element.cloneNode(true);
    for (const input of copy.querySelectorAll("input[name=csrfmiddlewaretoken]")) input.remove();
    for (const marked of [copy, ...copy.querySelectorAll(`.${CHANGED}`)]) {
      marked.classList.remove(CHANGED);
      if (!marked.classList.length) marked.removeAttribute("class");
    }
    return copy;
  }

  function markChanged(element) {
    if (!element) return;
    element.classList.add(CHANGED);
    element.addEventListener("animationend", () => element.classList.remove(CHANGED), { once: true });
  }

  function apply(event) {
    const parts = checked(event);
    if (!parts) return;
    const token = csrfToken();
    for (const { current, replacement } of parts) {
      // A re-sync with nothing new (every reconnect sends one) leaves the page alone.
      if (comparable(replacement).isEqualNode(comparable(current))) continue;
      const tallyBefore = current.querySelector("#tally");
      const tallyChanged = tallyBefore && !tallyBefore.isEqualNode(replacement.querySelector("#tally"));
      fillTokens(replacement, token);
      const refocus = carryOver(current, replacement);
      current.replaceWith(replacement);
      refocus();
      if (tallyChanged) markChanged(replacement.querySelector("#tally"));
    }
    page.dataset.status = event.status;
  }

  window.DeskLive.connect({ path: `/ws/versions/${versionId}/`, badge: live, name: "version page", onEvent: apply });
})();
