// Last step of loading: the page's language (for screen readers and the 提示 toast title) and the tab's title in it
// (the HTML names both languages until now; the widget sends none: embedded as a web component, the document and
// its title are the portal's), the input's height
// for its new placeholder (Gradio sized the box for the first placeholder, which wrapped to two lines on a phone,
// then shrank it at the first message and moved the chat), focus on wide screens only (a phone's keyboard must
// not cover the welcome), and the top of the page. data-chat-loaded says the chat is ready in its language (a portal
// script or a test waits for it; Gradio sets <html lang> itself early, so lang alone does not say it).
(language, title) => {
  document.documentElement.lang = language === 'zh' ? 'zh-CN' : 'en';
  if (title) document.title = title;
  document.documentElement.dataset.chatLoaded = language;
  const box = document.querySelector('#question textarea');
  if (box) box.dispatchEvent(new Event('input', {bubbles: true}));
  if (box && window.innerWidth > 700) box.focus({preventScroll: true});
  window.scrollTo(0, 0);
}
