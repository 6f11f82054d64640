// What every live page of the desk shares (the run page, run.js; a version's page, version.js): one socket
// to the server with its reconnects, the "live" badge, and server-rendered fragments parsed where nothing in
// them can load or run until the page's own rules have checked them. Each page keeps its own rules of what a
// fragment may contain and where it may go; this file only gives them the one way to read a fragment.
(function () {
  "use strict";

  // The consumers' close codes (memos.live.sockets): do not reconnect after these.
  const CLOSED = {
    4404: "not available", // no such page, or not yours: the same answer for both
    4401: "signed out", // the session that opened the socket ended
    4429: "too many open pages", // this person has as many live pages open as the desk allows
  };
  const FIRST_DELAY_MS = 500;
  const MAX_DELAY_MS = 15000;

  const parser = new DOMParser();

  // The fragment ``html`` is made of, parsed in a document of its own, with no window: nothing in it loads
  // or runs until it has been checked and is adopted by the page. (Chromium still reports an inline handler
  // to the page's policy as the parser meets it: a refused event can show up as a policy report, never as a
  // script that ran.)
  function fromHtml(html) {
    const parsed = parser.parseFromString(html.trim(), "text/html");
    const content = parsed.createDocumentFragment();
    // What the parser moved into the head (script, style, meta, base...) stays with the rest, to be refused.
    content.append(...parsed.head.childNodes, ...(parsed.body?.childNodes ?? []));
    return content;
  }

  // The one element ``html`` is made of, if it is exactly one element that ``isClean`` accepts (with only
  // blank text around it); otherwise null.
  function single(html, isClean) {
    if (typeof html !== "string") return null;
    const content = fromHtml(html);
    const blank = (node) => node.nodeType === Node.TEXT_NODE && !node.data.trim();
    const stray = [...content.childNodes].some((node) => node.nodeType !== Node.ELEMENT_NODE && !blank(node));
    if (stray || content.children.length !== 1 || !isClean(content)) return null;
    return content.firstElementChild;
  }

  function sameOrigin(value) {
    try {
      return new URL(value, location.href).origin === location.origin;
    } catch {
      return false;
    }
  }

  function setLive(badge, state, text) {
    if (!badge) return;
    badge.hidden = false;
    badge.dataset.state = state;
    badge.textContent = text;
  }

  // A socket to ``path`` on this site for as long as the page is shown: reconnected with exponential backoff
  // and jitter after a drop (a restarted server is not met by every page at the same instant), never after
  // one of the close codes above. ``onEvent`` gets each event as parsed JSON; an event it cannot apply is
  // logged, not fatal. The server re-syncs the page on every (re)connect.
  function connect({ path, badge, name, onEvent }) {
    let socket = null;
    let attempts = 0;
    let retryTimer = null;

    function open() {
      clearTimeout(retryTimer);
      retryTimer = null;
      if (socket && socket.readyState <= WebSocket.OPEN) return;
      const scheme = location.protocol === "https:" ? "wss" : "ws";
      socket = new WebSocket(`${scheme}://${location.host}${path}`);
      setLive(badge, "connecting", attempts ? "reconnecting" : "connecting");
      socket.addEventListener("open", () => {
        attempts = 0;
        setLive(badge, "live", "live");
      });
      socket.addEventListener("message", (message) => {
        try {
          onEvent(JSON.parse(message.data));
        } catch (error) {
          console.error(`${name}: could not apply an event`, error);
        }
      });
      socket.addEventListener("close", (closed) => {
        socket = null;
        const final = CLOSED[closed.code];
        if (final) {
          setLive(badge, "off", final);
          return;
        }
        scheduleReconnect();
      });
    }

    function scheduleReconnect() {
      if (retryTimer) return;
      const delay = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** attempts) * (0.75 + Math.random() / 2);
      attempts += 1;
      setLive(badge, "off", "reconnecting");
      retryTimer = setTimeout(open, delay);
    }

    // Back from the browser's cache (the back button): the socket was closed when the page was left.
    window.addEventListener("pageshow", () => {
      if (!socket) open();
    });
    open();
  }

  window.DeskLive = Object.freeze({ connect, fromHtml, single, sameOrigin });
})();
