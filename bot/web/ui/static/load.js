// The saved conversation, if any (storage may be off in a sandboxed frame: then nothing is restored).
(ignored) => { try { return sessionStorage.getItem('KEY') || ''; } catch (e) { return ''; } }
