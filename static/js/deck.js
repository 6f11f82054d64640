// The deck viewer on a deck version's page: one slide at a time, with Previous/Next buttons, the left and
// right arrow keys and the thumbnail strip to jump. Without JavaScript the page lists every slide and the
// strip links to each one; this file only hides the others. The slide's address (#slide-N) is kept in the
// URL so a link or a reload opens the same slide. A figure's citation shows on hover and on focus (CSS);
// Escape hides an open one, as WCAG 1.4.13 asks of content that appears on hover or focus.
(function () {
  "use strict";

  const viewer = document.getElementById("deck-viewer");
  if (!viewer || viewer.closest(".printing")) return;
  const slides = [...viewer.querySelectorAll(".deck-slide-view")];
  const controls = viewer.querySelector(".deck-controls");
  if (slides.length === 0 || !controls) return;
  const previous = controls.querySelector('[data-deck-step="-1"]');
  const next = controls.querySelector('[data-deck-step="1"]');
  const position = controls.querySelector(".deck-position");
  const thumbs = [...viewer.querySelectorAll(".deck-strip a[data-slide]")];
  const ADDRESS = /^#slide-(\d+)$/;
  let current = 0;

  function show(index, { record = true } = {}) {
    current = Math.min(Math.max(index, 0), slides.length - 1);
    slides.forEach((slide, i) => {
      slide.hidden = i !== current;
    });
    thumbs.forEach((thumb, i) => {
      if (i === current) thumb.setAttribute("aria-current", "true");
      else thumb.removeAttribute("aria-current");
    });
    previous.disabled = current === 0;
    next.disabled = current === slides.length - 1;
    position.textContent = `Slide ${current + 1} of ${slides.length}`;
    thumbs[current]?.scrollIntoView({ block: "nearest", inline: "nearest" });
    if (record) history.replaceState(null, "", `#slide-${current + 1}`);
  }

  function fromAddress() {
    const match = ADDRESS.exec(location.hash);
    return match ? Number(match[1]) - 1 : 0;
  }

  // Keys typed into the review's forms (a textarea, a radio group's own arrows) are theirs, not the deck's.
  function typing(target) {
    return target instanceof Element && Boolean(target.closest("input, textarea, select, [contenteditable]"));
  }

  viewer.classList.add("is-paged");
  controls.hidden = false;
  previous.addEventListener("click", () => show(current - 1));
  next.addEventListener("click", () => show(current + 1));
  thumbs.forEach((thumb, i) =>
    thumb.addEventListener("click", (event) => {
      event.preventDefault();
      show(i);
    }),
  );
  window.addEventListener("hashchange", () => {
    if (ADDRESS.test(location.hash)) show(fromAddress(), { record: false });
  });
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (event.key === "Escape") {
      for (const open of viewer.querySelectorAll(".cite:hover, .cite:focus-within")) open.classList.add("dismissed");
      return;
    }
    if (typing(event.target)) return;
    if (event.key === "ArrowRight" && current < slides.length - 1) {
      event.preventDefault();
      show(current + 1);
    } else if (event.key === "ArrowLeft" && current > 0) {
      event.preventDefault();
      show(current - 1);
    }
  });
  // A dismissed citation shows again the next time it is hovered or focused.
  const undismiss = (event) => {
    const cite = event.target instanceof Element ? event.target.closest(".cite") : null;
    if (cite && !cite.contains(event.relatedTarget)) cite.classList.remove("dismissed");
  };
  viewer.addEventListener("focusout", undismiss);
  viewer.addEventListener("mouseout", undismiss);

  show(fromAddress(), { record: ADDRESS.test(location.hash) });
})();
