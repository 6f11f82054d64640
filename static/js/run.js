// The run page: live cards over a WebSocket (live.js), zoomable stages, and step documents in a side drawer.
// Every legitimate piece of HTML swapped in here was rendered (and escaped) by Django; this file only places
// it. It still trusts none of it: the socket relays whatever reaches the run's channel-layer group, and
// anything with access to Redis can put a message there. So a live event must be one well-formed fragment
// for an existing element of the kind it names, with nothing in it the server never renders (script, event
// handlers, non-web URLs), or it is refused whole; a drawer document is stripped of the same things.
(function () {
  "use strict";

  const page = document.getElementById("run-page");
  if (!page || !window.DeskLive) return;
  const { fromHtml, sameOrigin } = window.DeskLive;
  const runId = page.dataset.runId;
  const pipeline = document.getElementById("pipeline");
  const live = document.getElementById("live");
  const drawer = document.getElementById("drawer");
  const drawerBody = document.getElementById("drawer-body");
  const drawerTitle = document.getElementById("drawer-title");
  const drawerPage = document.getElementById("drawer-page");
  const drawerClose = document.getElementById("drawer-close");

  let openStep = null; // pk of the step whose document is in the drawer
  let openedFrom = null;
  let loadToken = 0;

  // --- what may be inserted

  const HTML_NS = "http://www.w3.org/1999/xhtml";
  // The elements and attributes the server's cards, status line and step documents are made of.
  const ELEMENTS = new Set(
    (
      "a abbr article b blockquote br caption code dd del details div dl dt em figcaption figure footer " +
      "h2 h3 h4 header hr i li ol p pre s section small span strong sub summary sup table tbody td tfoot " +
      "th thead time tr u ul img"
    ).split(" "),
  );
  // Images only of this run's own slide thumbnails (a step's deck, rasterised by the server), with no other
  // attribute than what lays them out: nothing a model wrote can point an image elsewhere.
  const IMAGE_ATTRIBUTES = new Set("src alt width height loading decoding".split(" "));
  const SLIDE_IMAGE = /^\/runs\/[0-9a-f-]+\/steps\/\d+\/slides\/\d+\.png$/;

  function slideImage(value) {
    try {
      const url = new URL(value, location.href);
      return url.origin === location.origin && SLIDE_IMAGE.test(url.pathname);
    } catch {
      return false;
    }
  }
  const ATTRIBUTES = new Set(
    "class id title href rel target role colspan rowspan scope open".split(" "),
  );

  // A link may go to a page of the web (or of this site), never to javascript:, data:, blob: or the like.
  function webUrl(value) {
    try {
      const url = new URL(value, location.href);
      return url.protocol === "https:" || url.protocol === "http:";
    } catch {
      return false;
    }
  }

  // Removes what the server never renders: other elements (script, style, svg, iframe, forms...) with
  // everything inside them, images other than a step's slide thumbnails, other attributes (every on*
  // handler, style, src but on those images...), and links that are not web URLs. Returns how many things
  // it removed.
  function clean(root) {
    let removed = 0;
    for (const element of [...root.querySelectorAll("*")]) {
      if (!root.contains(element)) continue; // inside something already removed
      if (element.namespaceURI !== HTML_NS || !ELEMENTS.has(element.localName)) {
        element.remove();
        removed += 1;
        continue;
      }
      if (element.localName === "img" && !slideImage(element.getAttribute("src") ?? "")) {
        element.remove();
        removed += 1;
        continue;
      }
      for (const { name, value } of [...element.attributes]) {
        const image = element.localName === "img" && IMAGE_ATTRIBUTES.has(name);
        const allowed =
          image || ATTRIBUTES.has(name) || /^data-[a-z0-9-]+$/.test(name) || /^aria-[a-z]+$/.test(name);
        if (!allowed || (name === "href" && !webUrl(value)) || (name === "target" && value !== "_blank")) {
          element.removeAttribute(name);
          removed += 1;
        }
      }
    }
    return removed;
  }

  // The one element of a socket event's fragment, if it is exactly one clean element and nothing else.
  function single(html) {
    return window.DeskLive.single(html, (content) => clean(content) === 0);
  }

  // The status line carries no link but, once the run has finished, the one to the version it froze.
  function statusLinksAllowed(status) {
    const links = status.querySelectorAll("a");
    if (links.length === 0) return true;
    const link = links[0];
    const href = link.getAttribute("href") ?? "";
    return (
      links.length === 1 &&
      link.matches("a.version-link") &&
      sameOrigin(href) &&
      /^\/versions\/\d+\/$/.test(new URL(href, location.href).pathname)
    );
  }

  // The replacement for an event's target, or null (with the reason logged) when the event is refused.
  function checked(event) {
    const refuse = (reason) => {
      console.warn(`run page: refused a live event (${reason})`);
      return null;
    };
    if (!event || typeof event !== "object" || typeof event.target !== "string") return refuse("not an event");
    if (event.run_id !== runId) return refuse("another run's event");
    const current = document.getElementById(event.target);
    const replacement = single(event.html);
    if (!replacement) return refuse("not one well-formed fragment");
    if (!current || replacement.id !== event.target || replacement.localName !== current.localName) {
      return refuse("no such target");
    }
    if (event.kind === "status") {
      if (
        event.target !== "run-status" ||
        !page.contains(current) ||
        !replacement.matches("div.run-status") ||
        replacement.querySelector("[id]") ||
        !statusLinksAllowed(replacement)
      ) {
        return refuse("not the status line");
      }
      return replacement;
    }
    if (event.kind === "agent") {
      const pk = /^step-(\d+)$/.exec(event.target)?.[1];
      const link = replacement.querySelector("a.step-card[data-doc]");
      const currentLink = current.querySelector("a.step-card[data-doc]");
      if (
        !pk ||
        !pipeline.contains(current) ||
        !current.matches("li.step") ||
        !replacement.matches("li.step") ||
        replacement.dataset.key !== current.dataset.key ||
        replacement.dataset.stage !== current.dataset.stage ||
        replacement.querySelector("[id]") ||
        replacement.querySelectorAll("a").length !== 1 ||
        !link ||
        link.dataset.doc !== pk ||
        !currentLink ||
        link.getAttribute("href") !== currentLink.getAttribute("href")
      ) {
        return refuse("not this step's card");
      }
      return replacement;
    }
    return refuse(`unknown kind ${String(event.kind).slice(0, 20)}`);
  }

  // --- live updates

  function swap(event) {
    const replacement = checked(event);
    if (!replacement) return;
    const current = document.getElementById(event.target);
    current.classList.remove("is-open");
    // A re-sync resends every card: leave unchanged ones alone so they do not replay their animations.
    if (replacement.isEqualNode(current)) {
      if (event.kind === "agent") markOpen(current);
      return;
    }
    current.replaceWith(replacement);
    if (event.kind === "agent") {
      markOpen(replacement);
      cardChanged(replacement);
    }
    if (event.kind === "status") statusChanged(replacement);
  }

  // A workflow whose result is drawn above the pipeline once the run ends (the screen's dashboard, a deck's
  // escalation panel) marks its waiting panel; when the run's status line says it ended, the page is drawn again with the result.
  function statusChanged(status) {
    const waiting = document.querySelector("[data-reload-when-done]");
    const ended = ["done", "needs_review", "failed", "cancelled"].includes(status.dataset.status);
    if (waiting && ended) location.reload();
  }

  function markOpen(card) {
    const pk = card.querySelector("[data-doc]")?.dataset.doc;
    card.classList.toggle("is-open", Boolean(pk) && pk === openStep);
  }

  function cardChanged(card) {
    const stage = card.closest(".stage");
    if (stage) countStage(stage);
    const pk = card.querySelector("[data-doc]")?.dataset.doc;
    if (pk && pk === openStep) {
      const shown = drawerBody.querySelector("article[data-status]");
      // Refresh the open document when its step moved on (typically: it just finished), or, for a step
      // whose document grows while it runs (a debate's threads), whenever its card says it moved.
      const growing = shown?.dataset.live === "true";
      if (!shown || growing || shown.dataset.status !== card.dataset.status) loadDocument(pk, false);
    }
  }

  function countStage(stage) {
    const cards = stage.querySelectorAll(".step");
    // A skipped step is finished too (a duplicate move merged into another, a lap the loop did not need).
    const done = stage.querySelectorAll(".step[data-status='done'], .step[data-status='skipped']").length;
    stage.querySelector("[data-done]").textContent = String(done);
    stage.querySelector("[data-total]").textContent = String(cards.length);
    stage.dataset.complete = cards.length > 0 && done === cards.length ? "true" : "false";
    stage.style.setProperty("--progress", String(cards.length ? done / cards.length : 0));
  }

  // --- stages

  // --- layers (seed 004's frontend): a layer zooms from its place in the pipeline to fill the view, and back.
  // FLIP: the layer is laid out where it ends, then drawn from where it was with an inverted transform that
  // eases to none. Only transform and opacity move, so the compositor draws every frame.

  const layered = pipeline.classList.contains("layers");
  const backdrop = document.getElementById("layer-backdrop");
  const stillness = window.matchMedia("(prefers-reduced-motion: reduce)");
  const LAYER_MS = 420;
  const EASE = "cubic-bezier(.2,.7,.2,1)";
  let slot = null; // keeps a zoomed layer's place in the pipeline

  function between(from, to) {
    const dx = from.left - to.left;
    const dy = from.top - to.top;
    return `translate(${dx}px, ${dy}px) scale(${from.width / to.width}, ${from.height / to.height})`;
  }

  function zoomIn(stage) {
    const from = stage.getBoundingClientRect();
    slot = document.createElement("div");
    slot.className = "layer-slot";
    stage.before(slot);
    stage.classList.add("is-zoomed");
    pipeline.classList.add("zoomed");
    stage.querySelector(".stage-head").setAttribute("aria-expanded", "true");
    backdrop.hidden = false;
    const to = stage.getBoundingClientRect();
    if (!stillness.matches) {
      const timing = { duration: LAYER_MS, easing: EASE };
      stage.animate([{ transform: between(from, to) }, { transform: "none" }], timing);
      stage.querySelector(".cards").animate([{ opacity: 0 }, { opacity: 0, offset: 0.45 }, { opacity: 1 }], timing);
      backdrop.animate([{ opacity: 0 }, { opacity: 1 }], timing);
    }
    stage.querySelector(".stage-close").focus({ preventScroll: true });
  }

  function zoomOut(stage) {
    const done = () => {
      stage.classList.remove("is-zoomed");
      pipeline.classList.remove("zoomed");
      stage.querySelector(".stage-head").setAttribute("aria-expanded", "false");
      backdrop.hidden = true;
      slot?.remove();
      slot = null;
      stage.querySelector(".stage-head").focus({ preventScroll: true });
    };
    if (stillness.matches || !slot) {
      done();
      return;
    }
    const from = stage.getBoundingClientRect();
    const to = slot.getBoundingClientRect();
    const timing = { duration: LAYER_MS * 0.8, easing: EASE, fill: "forwards" };
    stage.querySelector(".cards").animate([{ opacity: 1 }, { opacity: 0, offset: 0.4 }, { opacity: 0 }], timing);
    backdrop.animate([{ opacity: 1 }, { opacity: 0 }], timing);
    const shrinking = stage.animate([{ transform: "none" }, { transform: between(to, from) }], timing);
    shrinking.onfinish = () => {
      done();
      for (const animation of stage.getAnimations({ subtree: true })) animation.cancel();
      for (const animation of backdrop.getAnimations()) animation.cancel();
    };
  }

  function zoomLayer(stage) {
    const open = pipeline.querySelector(".stage.is-zoomed");
    if (open) zoomOut(open);
    else zoomIn(stage);
  }

  function zoom(stage) {
    if (layered) {
      zoomLayer(stage);
      return;
    }
    const zoomed = stage.classList.contains("is-zoomed");
    for (const other of pipeline.querySelectorAll(".stage")) {
      other.classList.remove("is-zoomed");
      other.querySelector(".stage-head").setAttribute("aria-expanded", "false");
    }
    pipeline.classList.toggle("zoomed", !zoomed);
    if (!zoomed) {
      stage.classList.add("is-zoomed");
      stage.querySelector(".stage-head").setAttribute("aria-expanded", "true");
    }
  }

  pipeline.addEventListener("click", (event) => {
    const head = event.target.closest(".stage-head");
    if (head) {
      // A zoomed layer's head is its title bar: only its close control zooms out.
      if (!(layered && head.closest(".stage").classList.contains("is-zoomed"))) zoom(head.closest(".stage"));
      return;
    }
    const close = event.target.closest(".stage-close");
    if (close) {
      zoom(close.closest(".stage"));
      return;
    }
    const link = event.target.closest("a[data-doc]");
    if (!link || event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    openedFrom = link;
    openDocument(link.dataset.doc, link.getAttribute("href"));
  });

  // --- the drawer

  function openDocument(pk, href) {
    openStep = pk;
    drawerPage.setAttribute("href", href);
    drawer.setAttribute("aria-hidden", "false");
    drawer.classList.add("open");
    document.body.classList.add("with-drawer");
    for (const card of pipeline.querySelectorAll(".step.is-open")) card.classList.remove("is-open");
    document.getElementById(`step-${pk}`)?.classList.add("is-open");
    history.replaceState(null, "", `#doc-${pk}`);
    loadDocument(pk, true);
  }

  async function loadDocument(pk, fresh) {
    const token = ++loadToken;
    const href = drawerPage.getAttribute("href");
    if (fresh) {
      drawerBody.replaceChildren();
      drawerBody.classList.add("loading");
    }
    try {
      if (!sameOrigin(href)) throw new Error("not a page of this site");
      const response = await fetch(href, { headers: { "X-Desk-Fragment": "1" }, credentials: "same-origin" });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const content = fromHtml(await response.text());
      if (token !== loadToken) return; // a newer document was asked for meanwhile
      const removed = clean(content);
      if (removed) console.warn(`run page: removed ${removed} unsafe part(s) from a document`);
      drawerBody.replaceChildren(content);
      drawerTitle.textContent = drawerBody.querySelector(".doc-title")?.textContent || "Document";
      if (fresh) drawer.focus();
    } catch (error) {
      if (token !== loadToken) return;
      const note = document.createElement("p");
      note.className = "notice bad";
      note.textContent = `Could not load this document (${error.message}).`;
      drawerBody.replaceChildren(note);
    } finally {
      if (token === loadToken) drawerBody.classList.remove("loading");
    }
  }

  function closeDrawer() {
    openStep = null;
    loadToken += 1;
    drawer.classList.remove("open");
    drawer.setAttribute("aria-hidden", "true");
    document.body.classList.remove("with-drawer");
    for (const card of pipeline.querySelectorAll(".step.is-open")) card.classList.remove("is-open");
    history.replaceState(null, "", location.pathname + location.search);
    if (openedFrom && document.contains(openedFrom)) openedFrom.focus();
  }

  drawerClose.addEventListener("click", closeDrawer);
  backdrop?.addEventListener("click", () => {
    const open = pipeline.querySelector(".stage.is-zoomed");
    if (open && !openStep) zoom(open);
  });
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    if (openStep) closeDrawer();
    else if (pipeline.classList.contains("zoomed")) zoom(pipeline.querySelector(".stage.is-zoomed"));
  });

  // Coming back (from a fact page, say) reopens the document that was open.
  function reopenFromHash() {
    const match = /^#doc-(\d+)$/.exec(location.hash);
    const link = match && document.querySelector(`#step-${match[1]} a[data-doc]`);
    if (link) openDocument(match[1], link.getAttribute("href"));
  }

  for (const stage of pipeline.querySelectorAll(".stage")) countStage(stage);
  reopenFromHash();
  window.DeskLive.connect({ path: `/ws/runs/${runId}/`, badge: live, name: "run page", onEvent: swap });
})();
