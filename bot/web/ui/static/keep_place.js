// A reload returns to where the person was in the conversation (it opened scrolled to the top): the chat's scroll
// position is kept in the tab (KEY) as they scroll and restored once the restored messages are laid out. Storage may
// be off in a sandboxed frame: then the chat simply opens at its top. Sets <html data-chat-placed> when done.
() => {
  const done = () => { document.documentElement.dataset.chatPlaced = '1'; };
  let saved = 0;
  try { saved = Number(sessionStorage.getItem('KEY') || 0); } catch (e) { saved = 0; }
  if (!window.__botKeepPlace) {
    window.__botKeepPlace = true;
    document.addEventListener('scroll', (event) => {
      const box = event.target;
      if (!box || !box.matches || !box.matches('#chat .bubble-wrap')) return;
      try { sessionStorage.setItem('KEY', String(Math.round(box.scrollTop))); } catch (e) {}
    }, {capture: true, passive: true});
  }
  if (!(saved > 0)) { done(); return; }
  const started = performance.now();
  const place = () => {
    const box = document.querySelector('#chat .bubble-wrap');
    const ready = box && box.scrollHeight - box.clientHeight >= saved;
    if (ready || performance.now() - started > 3000) {
      if (box) box.scrollTop = saved;
      done();
      return;
    }
    requestAnimationFrame(place);
  };
  requestAnimationFrame(place);
}
