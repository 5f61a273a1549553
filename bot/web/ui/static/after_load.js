// Last step of loading: the page's language (for screen readers and the 提示 toast title), focus on wide screens
// only (a phone's keyboard must not cover the welcome), and the top of the page.
(language) => {
  document.documentElement.lang = language === 'zh' ? 'zh-CN' : 'en';
  if (window.innerWidth > 700) { const box = document.querySelector('#question textarea'); if (box) box.focus({preventScroll: true}); }
  window.scrollTo(0, 0);
}
