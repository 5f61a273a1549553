// Keep the conversation in the tab (a reload restores it); an empty snapshot ("New chat") forgets it. KEY: per page.
(snapshot) => { try {
  if (snapshot) sessionStorage.setItem('KEY', snapshot); else sessionStorage.removeItem('KEY');
} catch (e) {} }
