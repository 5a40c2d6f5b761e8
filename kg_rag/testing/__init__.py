"""Test support shipped with kg-rag: the store compliance suite every backend passes, and deterministic
embeddings. ``kg_rag.testing.compliance`` needs pytest (a test dependency, imported only there).

    from kg_rag.testing.compliance import StoreComplianceSuite

    class TestMyStore(StoreComplianceSuite):
        @pytest.fixture
        def store_factory(self, tmp_path):
            return lambda: MyStore(...)          # a new, empty store on every call
"""

from kg_rag.testing.embeddings import BagOfWordsEmbeddings

__all__ = ["BagOfWordsEmbeddings"]
