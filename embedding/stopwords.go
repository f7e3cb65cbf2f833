package embedding

import "strings"

// stopwords are the most frequent function words of English, German,
// French, Spanish, Italian, Dutch and Portuguese. The Hashing embedder gives
// them little weight: they say little about what a text is about.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a an and are as at be been but by can did do does for from had has have he her his how i if in into is it its
		me my no not of on or our she so than that the their them then there these they this to was we were what when
		where which who why will with would you your
		aber als am an auch auf aus bei bin bis da das dass dem den der des die du durch ein eine einem einen einer es
		für hat ich ihr im ist mit nach nicht noch nur oder sich sie sind so um und uns von vor war was wie wir wird zu zum zur
		au aux avec ce ces dans de des du elle en est et il ils je la le les leur mais me ne nous on ou par pas pour qu
		que qui sa se ses son sont sur un une vous
		al con como del el es esta este las lo los más mi muy para pero por que se sin su sus una y
		che chi da dei della delle di e gli ha il nel non per più sono tra uno
		aan als bij dat de deze die dit een en het hij in is maar met naar niet of om ook op te van voor was wat ze zijn
		ao as com da das do dos em na no nos não os para pela pelo por que se sem um uma é
	`) {
		m[w] = true
	}
	return m
}()

// IsStopword reports whether word (in any case) is one of the function
// words the Hashing embedder gives little weight.
func IsStopword(word string) bool { return stopwords[strings.ToLower(word)] }
