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
  // Gradio scrolls the restored messages to their end once they are drawn: the place is set again for a moment
  // after the messages fit it, unless the person scrolls themselves (wheel, touch, a key) meanwhile.
  let touched = false;
  const mine = () => { touched = true; };
  ['wheel', 'touchstart', 'keydown', 'mousedown'].forEach(t => window.addEventListener(t, mine, {once: true, capture: true}));
  const started = performance.now();
  let fitted = 0;
  const place = () => {
    const box = document.querySelector('#chat .bubble-wrap');
    const now = performance.now();
    if (box && !touched && box.scrollHeight - box.clientHeight >= saved) {
      if (!fitted) fitted = now;
      if (Math.abs(box.scrollTop - saved) > 2) box.scrollTop = saved;
    }
    if (touched || (fitted && now - fitted > 1000) || now - started > 5000) {
      if (box && !touched && !fitted) box.scrollTop = saved;
      try { sessionStorage.setItem('KEY', String(Math.round(box ? box.scrollTop : 0))); } catch (e) {}
      done();
      return;
    }
    requestAnimationFrame(place);
  };
  requestAnimationFrame(place);
}
