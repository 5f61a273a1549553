// Last step of loading: the page's language (for screen readers and the 提示 toast title) and the tab's title in it
// (the HTML names both languages until now; the widget sends none: embedded as a web component, the document and
// its title are the portal's), the input's height
// for its new placeholder (Gradio sized the box for the first placeholder, which wrapped to two lines on a phone,
// then shrank it at the first message and moved the chat), focus on wide screens only (a phone's keyboard must
// not cover the welcome), and the top of the page. data-chat-loaded says the chat is ready in its language (a portal
// script or a test waits for it; Gradio sets <html lang> itself early, so lang alone does not say it).
// Then, for as long as the page lives, Gradio's controls are named in the page's language (LABELS, from
// bot.web.ui.strings: Gradio names them "Textbox", nothing, "Copy message" beside 赞/踩, "Disliked"), each message
// says whose it is, a vote button says whether it is pressed (aria-pressed), and toasts sit in the strip above the
// messages (--bot-toast-*: they take no room in the page and cover no control).
(language, title) => {
  document.documentElement.lang = language === 'zh' ? 'zh-CN' : 'en';
  if (title) document.title = title;
  document.documentElement.dataset.chatLoaded = language;
  // The first paint (bot.web.ui.first_paint, drawn from the page's HTML before Gradio) gives way to the chat, handing
  // over what the person did meanwhile: the words typed, sent when they pressed Enter or picked an example.
  const first = document.getElementById('bot-first');
  const kept = window.__botFirst || {};
  const typedFirst = first && first.contains(document.activeElement);
  if (first) first.remove();
  if (first && kept.text) {
    const box = document.querySelector('#question textarea');
    if (box) {
      box.value = kept.text;
      box.dispatchEvent(new Event('input', {bubbles: true}));
      if (kept.send) requestAnimationFrame(() => document.querySelector('#question button.submit-button')?.click());
      else if (typedFirst) box.focus({preventScroll: true});
    }
  }
  const box = document.querySelector('#question textarea');
  if (box) box.dispatchEvent(new Event('input', {bubbles: true}));
  if (box && window.innerWidth > 700) box.focus({preventScroll: true});
  window.scrollTo(0, 0);
  const words = (LABELS)[language === 'zh' ? 'zh' : 'en'];
  const root = document.documentElement;
  root.style.setProperty('--bot-searching', JSON.stringify(words.searching));
  const set = (el, name, value) => { if (el && el.getAttribute(name) !== value) el.setAttribute(name, value); };
  const name = () => {
    set(document.querySelector('#question textarea'), 'aria-label', words.box);
    set(document.querySelector('#question button.submit-button'), 'aria-label', words.send);
    set(document.querySelector('#vote-comment textarea, #vote-comment input'), 'aria-label', words.comment);
    set(document.querySelector('#vote-reason'), 'aria-label', words.reasons);
    const examples = document.querySelector('#chat .examples');
    if (examples) { set(examples, 'role', 'group'); set(examples, 'aria-label', words.examples); }
    document.querySelectorAll('#chat [data-testid=user]').forEach(e => { set(e, 'role', 'group'); set(e, 'aria-label', words.user); });
    document.querySelectorAll('#chat [data-testid=bot]').forEach(e => { set(e, 'role', 'group'); set(e, 'aria-label', words.bot); });
    // A toast's header is a button holding its close button (nested controls): the close button is enough.
    document.querySelectorAll('.toast-header[role=button]').forEach(h => { h.removeAttribute('role'); h.removeAttribute('tabindex'); });
    const ours = new Set(Object.values(words));
    // Every Gradio button of the page, also those it names only by a tooltip in English (a code block's "copy")
    // or by nothing: what it is comes from Gradio's own words (kept in data-bot-gradio) or its class.
    document.querySelectorAll('button[aria-label], button[title], button.copy_code_button, button.toast-close').forEach(b => {
      const label = b.getAttribute('aria-label') || b.getAttribute('title') || '';
      if (label && !ours.has(label)) b.dataset.botGradio = label;  // Gradio's own words: what the button is, its state
      const was = b.dataset.botGradio || label;
      const kind = b.classList.contains('copy_code_button') ? 'copy_code' : b.classList.contains('toast-close') ? 'close'
        : /^(Like|Liked|赞)$/.test(was) ? 'like' : /^(Dislike|Disliked|踩)$/.test(was) ? 'dislike'
        : /^(copy message|copy$|复制$)/i.test(was) ? 'copy' : /(copy|复制).*(conversation|对话)/i.test(was) ? 'copy_all'
        : /scroll/i.test(was) ? 'scroll' : /^(retry|重新回答)/i.test(was) ? 'retry' : /^(undo|撤销)/i.test(was) ? 'undo'
        : /^(clear|清空)/i.test(was) ? 'clear' : /^(edit|编辑)/i.test(was) ? 'edit' : /^(share|分享)/i.test(was) ? 'share'
        : /^(stop|停止)/i.test(was) ? 'stop' : /full ?screen|全屏/i.test(was) ? 'fullscreen'
        : /^(download|下载)/i.test(was) ? 'download' : '';
      if (!kind) return;
      set(b, 'aria-label', words[kind]);
      set(b, 'title', words[kind]);
      // Pressed: Gradio draws it in the accent colour (its zh label, 赞, is the same either way).
      if (kind === 'like' || kind === 'dislike') set(b, 'aria-pressed', /color-accent/.test(b.getAttribute('style') || '') ? 'true' : 'false');
    });
  };
  // copy_all names only a copy button: Gradio's hidden clear button ("清空对话") once matched 对话 and was named
  // 复制整段对话 too, so the page had two "copy the conversation" buttons, the first one hidden.
  // Gradio re-renders a vote button with its own words ("Disliked"): name() reads its state from them, once a frame.
  let queued = false;
  const relabel = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; name(); });
  };
  const place = () => {
    const strip = document.querySelector('#chat > .wrapper');
    if (!strip) return;
    const r = strip.getBoundingClientRect();
    root.style.setProperty('--bot-toast-top', `${Math.max(0, r.top)}px`);
    root.style.setProperty('--bot-toast-left', `${r.left + 2}px`);
    root.style.setProperty('--bot-toast-width', `${Math.max(120, r.width - 76)}px`);
  };
  if (!window.__botNamed) {
    window.__botNamed = true;
    new MutationObserver(relabel).observe(document.body,
      {subtree: true, childList: true, attributes: true, attributeFilter: ['aria-label', 'style']});
    const chat = document.querySelector('#chat');
    if (chat) new ResizeObserver(place).observe(chat);
    window.addEventListener('resize', place);
  }
  name();
  place();
}
