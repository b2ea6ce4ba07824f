// The book's search ranking (html_search_scorer in _config.yml; Sphinx puts this file into
// _static/language_data.js, which replaces the Scorer of _static/searchtools.js). Sphinx's own
// weights, then one rule: the chapters (book/partN/...) come before the pages that repeat their
// words (the equation index, the notation page, the problem sets, the template), so a search
// for "Udwadia" opens the Udwadia–Kalaba chapter first, not the index that lists its equations.
// tests/browser/test_site.py searches a few terms and checks the first result.
var Scorer = {
  score: (result) => {
    const [docname, , , , score] = result;
    return /^book\/part\d+\//.test(docname) ? score + 20 : score;
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
