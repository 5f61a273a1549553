// After a message is added: bring its start into view (inside the chat's own scroll area only, never
// the page around it: a portal embedding the widget must not jump). ROLE is "user" or "bot".
() => { setTimeout(() => {
  const all = document.querySelectorAll('#chat [data-testid=ROLE]');
  if (!all.length) return;
  const message = all[all.length - 1];
  let box = message.parentElement;
  while (box && !(box.scrollHeight > box.clientHeight && /(auto|scroll)/.test(getComputedStyle(box).overflowY))) {
    box = box.parentElement;
  }
  if (!box) return;
  const offset = message.getBoundingClientRect().top - box.getBoundingClientRect().top;
  box.scrollTo({top: box.scrollTop + offset - 8, behavior: 'smooth'});
}, 150); }
